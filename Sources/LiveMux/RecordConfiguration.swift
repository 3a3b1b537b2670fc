/// Everything `livemux record` needs.
public struct RecordConfiguration: Sendable {
    /// One input carrying both streams (`--input`); when set, `videoSource`/`audioSource` are unused.
    public var input: SourceSpec?
    public var videoSource: SourceSpec?
    public var audioSource: SourceSpec?
    public var video = VideoSettings()
    public var audio = AudioSettings()
    public var recordVideo = true
    public var recordAudio = true
    /// Where the recording goes: files, stdout, URLs, HTTP viewers.
    public var outputs = Outputs()
    /// Stop after this much media (seconds); nil runs until stopped.
    public var duration: Double?
    /// Pace synthetic and file sources at real time (devices always run at their own pace).
    public var realtime = true
    /// Packets each stream's mux queue holds before its producer waits.
    public var queueCapacity = 256
    /// Seconds a live device that failed mid-recording may stay away (filled with silence or its
    /// last frame, reopened) before the recording ends (`--device-timeout`).
    public var deviceTimeout: Double = 30
    public init() {}

    /// The default sources: a test pattern and a 440 Hz tone made in the format the settings ask
    /// for (by default 1280x720 at 30 fps, 48 kHz stereo), so nothing needs converting.
    public static func defaultVideoSource(_ v: VideoSettings) -> SourceSpec {
        let (width, height) = v.width.flatMap { w in v.height.map { (w, $0) } } ?? (VideoSettings.builtInWidth, VideoSettings.builtInHeight)
        return SourceSpec(format: "lavfi", url: "testsrc2=size=\(width)x\(height):rate=\(v.fps ?? VideoSettings.builtInFrameRate)")
    }

    public static func defaultAudioSource(_ a: AudioSettings) -> SourceSpec {
        let layout = (a.channels ?? AudioSettings.builtInChannels) == 1 ? "mono" : "stereo"
        return SourceSpec(format: "lavfi", url: "sine=frequency=440:sample_rate=\(a.sampleRate ?? AudioSettings.builtInSampleRate),"
                          + "aformat=sample_fmts=fltp:channel_layouts=\(layout)")
    }
}
