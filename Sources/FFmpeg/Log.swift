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
    /// libavdevice is loaded at run time (see `lm_register_devices` in shim.h); nil when that
    /// worked, else why it did not.
    private static let registrationFailure: String? = lm_register_devices().map { String(cString: $0) }

    /// Loads libavdevice and registers the capture devices (lavfi, v4l2, x11grab, pulse, alsa):
    /// `av_find_input_format` finds none of them before this ran. Safe to call any number of times.
    public static func registerDevices() throws {
        if let reason = registrationFailure { throw DeviceLibraryError(reason: reason) }
    }

    /// The input format of this name; the capture devices are loaded only when no file format
    /// has the name.
    static func inputFormat(named name: String) throws -> UnsafePointer<AVInputFormat>? {
        if let format = av_find_input_format(name) { return format }
        try registerDevices()
        return av_find_input_format(name)
    }

    public static func hasEncoder(named name: String) -> Bool { avcodec_find_encoder_by_name(name) != nil }
    public static func hasInputFormat(named name: String) throws -> Bool { try inputFormat(named: name) != nil }
}

/// libavdevice could not be loaded, so no capture device is available.
public struct DeviceLibraryError: Error, CustomStringConvertible, Sendable {
    public let reason: String
    public var description: String {
        "cannot load \(String(cString: lm_avdevice_soname())) for capture devices (\(reason)): install it with apt-get install libavdevice\(LIBAVDEVICE_VERSION_MAJOR)"
    }
}
