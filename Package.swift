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
        // Linux interfaces Swift's Glibc module leaves out (epoll, eventfd, TCP socket queries);
        // nothing to link. Only the POSIX target imports it.
        .systemLibrary(name: "CLinux"),
        // System calls made one way: `syscall(where:)` retries EINTR, reads errno at once and
        // throws a `SystemCallError` naming the call. Also the event loop's epoll and the TCP
        // socket under a network output, the descriptors built on CLinux.
        .target(name: "POSIX", dependencies: ["CLinux"]),
        // The one module that calls libav*: owning wrappers over the libav* API.
        .target(name: "FFmpeg", dependencies: ["CFFmpeg", "POSIX"]),
        // The product: capture, encode, interleave, mux, sinks. No C types in its public API.
        // The dashboard's page is compiled in (`PackageResources`), so no resource bundle has to
        // travel with the binary.
        .target(name: "LiveMux", dependencies: ["FFmpeg", "POSIX"],
                resources: ["dashboard.html", "dashboard.css", "dashboard.js"].map { .embedInCode("HTTP/Dashboard/\($0)") }),
        // Argument parsing, help text, progress line, signals and exit codes.
        .target(name: "LiveMuxCLI", dependencies: ["LiveMux", "POSIX"]),
        // The executable's preinit function: SIGINT, SIGTERM and SIGUSR1 held from before any
        // library initialises, for the CLI's signal thread. Linked by the executable alone.
        .target(name: "CProcessStart"),
        .executableTarget(name: "livemux", dependencies: ["LiveMuxCLI", "CProcessStart"]),
        .testTarget(name: "LiveMuxTests", dependencies: ["LiveMux", "FFmpeg", "POSIX"]),
        .testTarget(name: "LiveMuxCLITests", dependencies: ["LiveMuxCLI"]),
        .testTarget(name: "IntegrationTests", dependencies: []),
    ],
    swiftLanguageModes: [.v6]
)
