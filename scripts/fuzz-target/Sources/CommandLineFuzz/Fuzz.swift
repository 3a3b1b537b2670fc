import FuzzDriver
import LiveMux
@testable import LiveMuxCLI

/// libFuzzer's entry point. The first byte picks a command; the rest, cut at NUL bytes (which an
/// argv cannot hold), is its argument list. Parsing must return or throw — a usage error for
/// anything malformed — never crash. Every value parser also gets each argument directly.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    LogLevel.quiet.apply()
    let arguments = String(decoding: bytes.dropFirst(), as: UTF8.self)
        .split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
    switch first % 4 {
    case 0: _ = try? RecordCommand.parse(arguments)
    case 1: _ = try? RecordCommand.parse(arguments, serving: true)
    case 2: _ = try? MuxCommand.parse(arguments)
    default: _ = try? ReportCommand.parse(arguments)
    }
    for a in arguments {
        _ = try? Values.bitRate(a, option: "-b")
        _ = try? Values.integer(a, option: "-n", range: 1...240)
        _ = try? Values.seconds(a, option: "-t")
        _ = try? Values.size(a, option: "-s")
        _ = try? Values.keyValue(a, option: "--opt")
        _ = try? Values.choice(a, option: "-f", as: ContainerFormat.self)
        _ = SourceSpec.parse(a, isKnownFormat: { $0 == "lavfi" || $0 == "v4l2" })
        _ = try? SecretOutputArgument.expand(a, environment: ["KEY": "k3y", "EMPTY": ""])
    }
    return 0
}

@_cdecl("CommandLineFuzz_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
