// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for everything that parses untrusted bytes, built and run by scripts/fuzz
// (swift build -Xswiftc -sanitize=fuzzer,address). Debug builds allow `@testable import`, which
// reaches the internal parsers (HTTP request head, command-line values) without widening the API.
let fuzzer: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]
let package = Package(
    name: "LiveMuxFuzz",
    dependencies: [.package(name: "LiveMux", path: "../..")],
    targets: [
        // The hand-over from each target's entry point to libFuzzer's driver.
        .target(name: "FuzzDriver", swiftSettings: []),
        // Pre-encoded H.264/HEVC/AAC packets through the public Muxer API (the input normalizers).
        .executableTarget(name: "NormalizerFuzz", dependencies: ["FuzzDriver", .product(name: "LiveMux", package: "LiveMux")],
                          swiftSettings: fuzzer),
        // What an HTTP client sends to `livemux serve`: the request head, through the server's own socket path.
        .executableTarget(name: "HTTPRequestFuzz", dependencies: ["FuzzDriver", .product(name: "LiveMux", package: "LiveMux")],
                          swiftSettings: fuzzer),
        // Output URLs: maskedURL, secretParts, Destination.parse, ListenAddress.parse.
        .executableTarget(name: "URLFuzz", dependencies: ["FuzzDriver", .product(name: "LiveMux", package: "LiveMux")],
                          swiftSettings: fuzzer),
        // Command lines of record, serve, mux and report, and every value parser.
        .executableTarget(name: "CommandLineFuzz", dependencies: ["FuzzDriver", .product(name: "LiveMuxCLI", package: "LiveMux"),
                                                                  .product(name: "LiveMux", package: "LiveMux")],
                          swiftSettings: fuzzer),
    ],
    swiftLanguageModes: [.v6]
)
