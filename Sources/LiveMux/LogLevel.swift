import FFmpeg

/// How much of FFmpeg's own log (libx264's, the AAC encoder's, libavformat's…) reaches stderr, or
/// the app's handler.
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

    /// Applies the level and sends every line to `handler` instead of stderr (nil: stderr again),
    /// without its trailing newline and with stream keys and passwords masked. An app that embeds
    /// LiveMux keeps FFmpeg's lines out of its own stderr this way, or with `.quiet`.
    public func apply(handler: (@Sendable (String) -> Void)?) {
        apply()
        FFmpegLog.setHandler(handler)
    }
}
