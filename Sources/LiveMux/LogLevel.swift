import FFmpeg

/// How much of FFmpeg's own log reaches stderr.
public enum LogLevel: Sendable {
    case quiet, errors, warnings, verbose

    /// Applies the level to FFmpeg's log.
    public func apply() {
        switch self {
        case .quiet: FFmpegLog.setLevel(.quiet)
        case .errors: FFmpegLog.setLevel(.error)
        case .warnings: FFmpegLog.setLevel(.warning)
        case .verbose: FFmpegLog.setLevel(.info)
        }
    }
}
