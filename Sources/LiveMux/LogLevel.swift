import FFmpeg
import POSIX

/// How much of FFmpeg's own log (libx264's, the AAC encoder's, libavformat's…) reaches stderr, or
/// the app's handler. A library is quiet unless asked: `.quiet` until the app applies a level.
public enum LogLevel: Sendable {
    case quiet, errors, warnings, verbose

    /// The level the app applied last (`.quiet` before any): FFmpeg's own default is to print
    /// its info lines (`[aac] Qavg …`) into the app's stderr.
    private static let chosen = Locked(LogLevel.quiet)

    /// Applies the level to FFmpeg's log.
    public func apply() {
        Self.chosen.withLock { $0 = self }
        setFFmpegLevel()
    }

    /// Applies the level and sends every line to `handler` instead of stderr (nil: stderr again),
    /// without its trailing newline and with stream keys and passwords masked. An app that embeds
    /// LiveMux keeps FFmpeg's lines out of its own stderr this way, or with `.quiet`.
    public func apply(handler: (@Sendable (String) -> Void)?) {
        apply()
        FFmpegLog.setHandler(handler)
    }

    /// Called where a job or a muxer is made: FFmpeg gets the level the app chose, else quiet.
    static func applyChosen() { chosen.withLock { $0 }.setFFmpegLevel() }

    private func setFFmpegLevel() {
        switch self {
        case .quiet: FFmpegLog.setLevel(.quiet)
        case .errors: FFmpegLog.setLevel(.error)
        case .warnings: FFmpegLog.setLevel(.warning)
        case .verbose: FFmpegLog.setLevel(.info)
        }
    }
}
