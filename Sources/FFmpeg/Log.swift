import CFFmpeg

/// FFmpeg's own log (`av_log`), which goes to stderr.
public enum FFmpegLog {
    public enum Level: Int32, Sendable {
        case quiet = -8, error = 16, warning = 24, info = 32, verbose = 40, debug = 48
    }

    public static func setLevel(_ level: Level) { av_log_set_level(level.rawValue) }
}

/// One-time set-up of the libraries.
public enum FFmpegLibrary {
    private static let registered: Bool = {
        avdevice_register_all()
        return true
    }()

    /// Registers the capture devices (lavfi, v4l2, x11grab, pulse, alsa): `av_find_input_format`
    /// finds none of them before this ran. Safe to call any number of times.
    public static func registerDevices() { _ = registered }

    public static func hasEncoder(named name: String) -> Bool { avcodec_find_encoder_by_name(name) != nil }
    public static func hasInputFormat(named name: String) -> Bool {
        registerDevices()
        return av_find_input_format(name) != nil
    }
}
