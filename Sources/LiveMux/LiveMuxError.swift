import FFmpeg

/// Errors of LiveMux's own, each with a message that names the problem and the fix.
public enum LiveMuxError: Error, CustomStringConvertible, Sendable {
    case unsupported(String)
    case invalid(String)
    case output(String)
    case input(String)
    /// The configuration asks for what cannot be (a filter graph that does not parse or fit the
    /// sources): the CLI's usage error, exit 64.
    case usage(String)

    public var description: String {
        switch self {
        case .unsupported(let m), .invalid(let m), .output(let m), .input(let m), .usage(let m): return m
        }
    }
}
