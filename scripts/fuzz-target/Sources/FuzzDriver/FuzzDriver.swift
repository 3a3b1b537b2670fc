// SwiftPM links an executable target's entry point as `<module>_main` (aliased to `main`), so each
// target's entry point hands control to libFuzzer's driver instead of relying on libFuzzer's own
// `main`. This is the one copy of that hand-over.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

/// Runs libFuzzer with the process's arguments, calling `body` with each input.
public func runLibFuzzer(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                         _ body: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, body)
}
