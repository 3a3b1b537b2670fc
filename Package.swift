// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "LiveMux",
    products: [
        .library(name: "LiveMux", targets: ["LiveMux"]),
        .executable(name: "livemux", targets: ["livemux"]),
        // For scripts/fuzz-target only (its command-line fuzzer); not an API.
        .library(name: "LiveMuxCLI", targets: ["LiveMuxCLI"]),
    ],
    targets: [
        // FFmpeg 5.1 from Debian, found through pkg-config. Only the FFmpeg target imports it.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil libswresample libswscale",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev",
                              "libavdevice-dev", "libavfilter-dev", "libswresample-dev", "libswscale-dev"])]
        ),
        // epoll and eventfd from glibc, for the HTTP server's event loop (LiveMux's EventPoll only).
        .systemLibrary(name: "CEventPoll"),
        // The one module that calls C: owning wrappers over the libav* API.
        .target(name: "FFmpeg", dependencies: ["CFFmpeg"]),
        // The product: capture, encode, interleave, mux, sinks. No C types in its public API.
        .target(name: "LiveMux", dependencies: ["FFmpeg", "CEventPoll"]),
        // Argument parsing, help text, progress line, signals and exit codes.
        .target(name: "LiveMuxCLI", dependencies: ["LiveMux"]),
        .executableTarget(name: "livemux", dependencies: ["LiveMuxCLI"]),
        .testTarget(name: "LiveMuxTests", dependencies: ["LiveMux", "FFmpeg"]),
        .testTarget(name: "LiveMuxCLITests", dependencies: ["LiveMuxCLI"]),
        .testTarget(name: "IntegrationTests", dependencies: []),
    ],
    swiftLanguageModes: [.v6]
)
