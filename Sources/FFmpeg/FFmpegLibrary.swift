import CFFmpeg

/// One-time set-up of the libraries.
public enum FFmpegLibrary {
    /// libavdevice is loaded at run time (see `lm_register_devices` in shim.h); nil when that
    /// worked, else why it did not.
    private static let registrationFailure: String? = lm_register_devices().map { String(cString: $0) }

    /// Loads libavdevice and registers the capture devices (lavfi, v4l2, x11grab, pulse, alsa):
    /// `av_find_input_format` finds none of them before this ran. Safe to call any number of times.
    static func registerDevices() throws {
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
