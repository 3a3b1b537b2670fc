// swift-tools-version:6.0
import PackageDescription

// A libFuzzer target for the input normalizer, through LiveMux's public Muxer API.
// Built and run by scripts/fuzz (swift build -Xswiftc -sanitize=fuzzer).
let package = Package(
    name: "NormalizerFuzz",
    dependencies: [.package(name: "LiveMux", path: "../..")],
    targets: [
        .executableTarget(name: "NormalizerFuzz", dependencies: [.product(name: "LiveMux", package: "LiveMux")],
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
