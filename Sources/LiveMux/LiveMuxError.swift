import FFmpeg

/// Errors of LiveMux's own, each with a message that names the problem and the fix.
public enum LiveMuxError: Error, CustomStringConvertible, Sendable {
    case unsupported(String)
    case invalid(String)
    case output(String)
    case input(String)

    public var description: String {
        switch self {
        case .unsupported(let m), .invalid(let m), .output(let m), .input(let m): return m
        }
    }
}
