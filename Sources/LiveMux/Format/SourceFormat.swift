import FFmpeg

/// What a source says it delivers, read when it is opened: the frame size and rate of its video
/// stream, the sample rate and channel count of its audio stream. Zero (or a zero rate) where it
/// does not say, or has no such stream.
struct SourceFormat: Sendable, Equatable {
    var width = 0
    var height = 0
    /// The nominal rate (`r_frame_rate`; a lavfi output's frame rate).
    var frameRate = Rational(0, 1)
    /// Frames over duration (`avg_frame_rate`), for sources with no nominal rate.
    var averageFrameRate = Rational(0, 1)
    var sampleRate = 0
    var channels = 0

    init() {}

    /// `device`: a libavdevice input, which is not probed: it leaves r_frame_rate unset and
    /// states the rate it delivers as avg_frame_rate (x11grab: its framerate option), so that
    /// is its nominal rate.
    init(video: InputDevice.Stream?, audio: InputDevice.Stream?, device: Bool) {
        if let v = video {
            (width, height) = (v.parameters.width, v.parameters.height)
            let unset = v.baseFrameRate.num == 0
            (frameRate, averageFrameRate) = (device && unset ? v.averageFrameRate : v.baseFrameRate, v.averageFrameRate)
        }
        if let a = audio { (sampleRate, channels) = (a.parameters.sampleRate, a.parameters.channelCount) }
    }

    init(video: FilterGraph.Output?, audio: FilterGraph.Output?) {
        if let v = video { (width, height, frameRate) = (v.width, v.height, v.frameRate) }
        if let a = audio { (sampleRate, channels) = (a.sampleRate, a.channels) }
    }
}
