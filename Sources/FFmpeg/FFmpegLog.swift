import CFFmpeg

/// FFmpeg's own log (`av_log`), which goes to stderr.
public enum FFmpegLog {
    public enum Level: Int32, Sendable {
        case quiet = -8, error = 16, warning = 24, info = 32, verbose = 40, debug = 48
    }

    public static func setLevel(_ level: Level) { av_log_set_level(level.rawValue) }
}
