import FFmpeg

/// What sits between a recording's sources and its encoders. The first source of each kind feeds
/// `video` / `audio`; the others feed their inputs (`videoInputs[0]` is v1's). Video: with more
/// than one source or a graph, a `VideoCompositor`, else the encoder itself. Audio: always an
/// `AudioMixer`, which meters a0 and, with more than one source or a graph, mixes.
struct SourceStages {
    let video: FrameConsumer?
    let videoInputs: [VideoSourceInput]
    let audio: AudioMixer?
    let audioInputs: [AudioSourceInput]

    /// `live`: the sources run on the capture clock (a late source is waited for only so long).
    /// `report`: receives warnings (a composed source that ended and stays on its last frame).
    init(_ sources: RecordingSources, graphs: SourceGraphs, audioFormat: AudioFormat?,
         video: VideoEncoder?, audio: AudioEncoder?, gains: AudioGains?, live: Bool,
         report: @escaping @Sendable (String) -> Void = { _ in }) throws {
        let sizes = graphs.videoSizes
        videoInputs = sizes.indices.dropFirst().map {
            VideoSourceInput(label: "v\($0)", width: sizes[$0].width, height: sizes[$0].height, live: live, device: sources.video[$0].deviceStatus,
                             report: report)
        }
        if let video, let graph = graphs.video {
            self.video = try VideoCompositor(encoder: video, width: sizes[0].width, height: sizes[0].height, inputs: videoInputs, graph: graph,
                                             rebuild: graphs.rebuildVideo)
        } else {
            self.video = video
        }
        if let audio, let format = audioFormat {
            audioInputs = try sources.audio.indices.dropFirst().map { try AudioSourceInput(label: "a\($0)", format: format, live: live) }
            self.audio = try AudioMixer(encoder: audio, format: format, inputs: audioInputs, graph: graphs.audio, gains: gains,
                                    rebuild: graphs.rebuildAudio, live: live)
        } else {
            (self.audio, audioInputs) = (nil, [])
        }
    }

    /// Every source's label, name, state and (audio) level.
    func snapshots(_ sources: RecordingSources) -> [SourceSnapshot] {
        let video = sources.video.enumerated().map { i, s in
            SourceSnapshot(label: "v\(i)", kind: .video, name: s.name, state: s.state, peakDBFS: nil)
        }
        let meters = (audio.map { [$0.meter] } ?? []) + audioInputs.map(\.meter)
        let audio = zip(sources.audio, meters).enumerated().map { i, pair in
            SourceSnapshot(label: "a\(i)", kind: .audio, name: pair.0.name, state: pair.0.state, peakDBFS: pair.1.dBFS)
        }
        return video + audio
    }
}
