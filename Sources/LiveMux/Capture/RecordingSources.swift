/// A recording's sources, opened, in the order of their labels: the input (`--input`) first, as
/// v0 and a0, then the other sources of each kind in the order given; the built-in ones where a
/// kind has none. A source after the first of its kind never ends the recording by staying away
/// (`DeviceReopening.endsRecording`).
struct RecordingSources {
    /// Every opened source, each once (the input carries both kinds).
    let all: [CaptureSource]
    /// The video sources, v0 first; empty without video.
    let video: [CaptureSource]
    let audio: [CaptureSource]

    init(_ config: RecordConfiguration, report: @escaping @Sendable (String) -> Void) throws {
        let (wantVideo, wantAudio) = (config.recordVideo, config.recordAudio)
        let first = DeviceReopening(timeout: config.deviceTimeout)
        let later = DeviceReopening.later(timeout: config.deviceTimeout)
        let open = { (spec: SourceSpec, video: Bool, audio: Bool, reopening: DeviceReopening) in
            try CaptureSource(spec: spec, video: video, audio: audio, realtime: config.realtime,
                              frameRate: config.video.fps, reopening: reopening, report: report)
        }
        var video: [CaptureSource] = [], audio: [CaptureSource] = []
        var all: [CaptureSource] = []
        if let input = config.input {
            let source = try open(input, wantVideo, wantAudio, first)
            all.append(source)
            if wantVideo { video.append(source) }
            if wantAudio { audio.append(source) }
        }
        if wantVideo {
            let specs = config.videoSources.isEmpty && video.isEmpty ? [RecordConfiguration.defaultVideoSource(config.video)] : config.videoSources
            for spec in specs {
                video.append(try open(spec, true, false, video.isEmpty ? first : later))
                all.append(video.last!)
            }
        }
        if wantAudio {
            let specs = config.audioSources.isEmpty && audio.isEmpty ? [RecordConfiguration.defaultAudioSource(config.audio)] : config.audioSources
            for spec in specs {
                audio.append(try open(spec, false, true, audio.isEmpty ? first : later))
                all.append(audio.last!)
            }
        }
        (self.all, self.video, self.audio) = (all, video, audio)
    }
}
