// swift-tools-version:6.0
import PackageDescription

// An app that already has encoded media and only needs LiveMux's muxer. It uses nothing but
// LiveMux's public API (no FFmpeg types), depending on the package by path.
let package = Package(
    name: "MuxFiles",
    dependencies: [.package(name: "LiveMux", path: "../..")],
    targets: [
        .executableTarget(name: "MuxFiles", dependencies: [.product(name: "LiveMux", package: "LiveMux")]),
    ],
    swiftLanguageModes: [.v6]
)
