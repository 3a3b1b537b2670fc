import CFFmpeg

/// An error code returned by a libav* function, with the name of the function that returned it.
///
/// Like swift-system's `Errno`, this is a struct over the raw code, so codes without a named
/// member survive untouched.
public struct FFmpegError: Error, Equatable, CustomStringConvertible, Sendable {
    public let code: Int32
    public let function: String

    public init(code: Int32, function: String) {
        self.code = code
        self.function = function
    }

    static let endOfFileCode = lm_averror_eof()
    static let tryAgainCode = lm_averror_eagain()
    /// What libavformat's I/O returns when the interrupt callback asked it to stop.
    static let exitCode = lm_averror_exit()

    static func posix(_ errno: Int32) -> Int32 { lm_averror(errno) }

    /// FFmpeg's own text for the code, as `av_strerror` gives it.
    public var message: String { Self.message(for: code) }

    public var description: String { "\(function): \(message) (\(code))" }

    public static func message(for code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 {
            return "error \(code)"
        }
        let end = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Every call into libav* that returns a status goes through here: a negative return becomes a
/// thrown `FFmpegError` that names the C function.
@discardableResult
@inline(__always)
func check(_ code: Int32, _ function: @autoclosure () -> String) throws -> Int32 {
    if code < 0 { throw FFmpegError(code: code, function: function()) }
    return code
}

/// What a receive call's status means: the value, `.needsInput` (EAGAIN), `.endOfStream` (EOF),
/// or an error thrown as `FFmpegError`.
func received<Value>(_ code: Int32, _ value: Value, _ function: @autoclosure () -> String) throws -> Received<Value> {
    if code == FFmpegError.tryAgainCode { return .needsInput }
    if code == FFmpegError.endOfFileCode { return .endOfStream }
    try check(code, function())
    return .value(value)
}

/// An allocation that returned NULL.
func outOfMemory(_ function: String) -> FFmpegError {
    FFmpegError(code: lm_averror(ENOMEM), function: function)
}
