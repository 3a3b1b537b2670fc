/// Options a live device gets unless the user gave them (`--audio-opt`, `--video-opt`).
///
/// pulse: without `fragment_size` PulseAudio picks its own (seen: 2 s buffers whose stamps ran
/// backwards, 400 ms of A/V offset), so ~20 ms fragments are asked for: bytes = rate × channels ×
/// 2 bytes (s16) × 0.02 s, from the rate and channels asked for or libavdevice's defaults
/// (48 kHz, 2). FFmpeg 5.1's alsa device has no such option: it already asks ALSA for the
/// smallest period the device offers (docs/devices.md).
/// x11grab: its default rate is NTSC's 29.97, which against a 30 fps recording leaves a slot
/// empty every 33 s, so it is asked for the recording's rate (`--fps`, else LiveMux's 30).
enum DeviceDefaults {
    /// The fragment pulse is asked to deliver (s).
    static let fragmentSeconds = 0.02
    /// libavdevice's pulse defaults.
    static let pulseRate = 48000, pulseChannels = 2

    static func options(for spec: SourceSpec, frameRate: FrameRate?) -> [String: String] {
        var options = spec.options
        switch spec.format {
        case "pulse" where options["fragment_size"] == nil:
            let rate = options["sample_rate"].flatMap { Int($0) } ?? pulseRate
            let channels = options["channels"].flatMap { Int($0) } ?? pulseChannels
            options["fragment_size"] = String(Int(Double(rate * channels * 2) * fragmentSeconds))
        case "x11grab" where options["framerate"] == nil:
            options["framerate"] = (frameRate ?? VideoSettings.builtInFrameRate).description
        default:
            break
        }
        return options
    }
}
