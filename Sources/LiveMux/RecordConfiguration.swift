/// Everything `livemux record` needs.
public struct RecordConfiguration: Sendable {
    /// One input carrying both streams (`--input`): the first source of each kind (v0, a0).
    public var input: SourceSpec?
    /// Video sources in order, after the input's video if there is one: v0 (or v1), v1 … The
    /// second and later are composed over the first (`composition`). Empty: the built-in test
    /// pattern, unless the input has video.
    public var videoSources: [SourceSpec] = []
    /// Audio sources in order, after the input's audio: mixed into the one track. Empty: the
    /// built-in tone, unless the input has audio.
    public var audioSources: [SourceSpec] = []
    /// How several sources become one stream of each kind, and the filters before the encoders.
    public var composition = Composition()
    /// The first video source: `videoSources` with one element.
    public var videoSource: SourceSpec? {
        get { videoSources.first }
        set { videoSources = newValue.map { [$0] } ?? [] }
    }
    /// The first audio source: `audioSources` with one element.
    public var audioSource: SourceSpec? {
        get { audioSources.first }
        set { audioSources = newValue.map { [$0] } ?? [] }
    }
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
    /// Let sources' volumes and mutes and outputs' video bit rates change while the job runs
    /// (`Pipeline.setAudio`, `setVideoBitRate`; the control API, which turns it on). It costs a
    /// mix graph for a single audio source and VBV rate control in every encode.
    public var liveControl = false
    public init() {}

    /// The default sources: a test pattern and a 440 Hz tone made in the format the settings ask
    /// for (by default 1280x720 at 30 fps, 48 kHz stereo), so nothing needs converting.
    static func defaultVideoSource(_ v: VideoSettings) -> SourceSpec {
        let (width, height) = v.width.flatMap { w in v.height.map { (w, $0) } } ?? (VideoSettings.builtInWidth, VideoSettings.builtInHeight)
        return SourceSpec(format: "lavfi", url: "testsrc2=size=\(width)x\(height):rate=\(v.fps ?? VideoSettings.builtInFrameRate)")
    }

    static func defaultAudioSource(_ a: AudioSettings) -> SourceSpec {
        let layout = (a.channels ?? AudioSettings.builtInChannels) == 1 ? "mono" : "stereo"
        return SourceSpec(format: "lavfi", url: "sine=frequency=440:sample_rate=\(a.sampleRate ?? AudioSettings.builtInSampleRate),"
                          + "aformat=sample_fmts=fltp:channel_layouts=\(layout)")
    }

    /// The same, each output with its id (`Outputs.identified`).
    func identifyingOutputs() -> RecordConfiguration {
        var c = self
        c.outputs = c.outputs.identified()
        return c
    }
}
