import CFFmpeg

/// The sources a libavdevice backend can name (`avdevice_list_input_sources`): pulse's sources
/// and sinks' monitors, alsa's capture devices, v4l2's cameras. Backends that cannot list (x11grab)
/// answer ENOSYS.
public enum DeviceSources {
    public struct Source: Sendable, Equatable {
        /// What goes after `FORMAT:` (`rig_mic`, `hw:CARD=PCH,DEV=0`, `/dev/video0`).
        public let name: String
        public let description: String
        public let isDefault: Bool
        public init(name: String, description: String, isDefault: Bool) {
            (self.name, self.description, self.isDefault) = (name, description, isDefault)
        }
    }

    /// Whether ALSA opens the PCM `name` for capture (or it is there but busy): what `alsa`'s list
    /// does not tell (see `lm_alsa_open_for_capture`). Call after `list(format: "alsa")`.
    public static func alsaCanCapture(_ name: String) -> Bool {
        let status = lm_alsa_open_for_capture(name)
        return status == 0 || status == -EBUSY
    }

    /// The backend's sources; throws `FFmpegError` (ENOSYS: it cannot list; others: it failed,
    /// such as no PulseAudio daemon).
    public static func list(format: String) throws -> [Source] {
        guard let inputFormat = try FFmpegLibrary.inputFormat(named: format) else {
            throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "av_find_input_format(\(format))")
        }
        var list: UnsafeMutablePointer<AVDeviceInfoList>?
        defer { lm_free_device_list(&list) }
        try check(lm_list_input_sources(inputFormat, &list), "avdevice_list_input_sources(\(format))")
        guard let l = list?.pointee, let devices = l.devices else { return [] }
        return (0..<Int(l.nb_devices)).compactMap { i in
            guard let d = devices[i]?.pointee else { return nil }
            return Source(name: d.device_name.map { String(cString: $0) } ?? "",
                          description: d.device_description.map { String(cString: $0) } ?? "",
                          isDefault: Int32(i) == l.default_device)
        }
    }
}
