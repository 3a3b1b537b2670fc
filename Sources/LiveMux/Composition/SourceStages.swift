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
    init(_ sources: RecordingSources, composition c: Composition, videoFormat: VideoFormat?, audioFormat: AudioFormat?,
         video: VideoEncoder?, audio: AudioEncoder?, live: Bool) throws {
        if let video, let format = videoFormat {
            // Each source enters the graph at its own size (the first one's is the picture's).
            let sizes: [(width: Int, height: Int)] = sources.video.map { s in
                s.format.width > 0 && s.format.height > 0 ? (s.format.width, s.format.height) : (format.width, format.height)
            }
            videoInputs = sizes.indices.dropFirst().map { VideoSourceInput(label: "v\($0)", width: sizes[$0].width, height: sizes[$0].height, live: live) }
            if let text = GraphDescription.video(sizes: sizes, c) {
                let rate = format.fps.rational, timeBase = VideoCompositor.timeBase
                let inputs = sizes.enumerated().map { i, size -> ProcessingGraph.Input in
                    let arguments = "video_size=\(size.width)x\(size.height):pix_fmt=\(PixelFormat.yuv420p.rawValue)"
                        + ":pixel_aspect=1/1:frame_rate=\(rate.num)/\(rate.den):time_base=\(timeBase.num)/\(timeBase.den)"
                    return ProcessingGraph.Input(label: "v\(i)", mediaType: .video, arguments: arguments)
                }
                let graph = try Self.graph(text, inputs, output: GraphDescription.videoOutput, given: c.videoGraph != nil ? "--filter-complex" : "--vf")
                self.video = try VideoCompositor(encoder: video, width: sizes[0].width, height: sizes[0].height, inputs: videoInputs, graph: graph)
            } else {
                self.video = video
            }
        } else {
            (self.video, videoInputs) = (nil, [])
        }
        if let audio, let format = audioFormat {
            audioInputs = try sources.audio.indices.dropFirst().map { try AudioSourceInput(label: "a\($0)", format: format, live: live) }
            let layout = format.channels == 1 ? "mono" : "stereo"
            let graph = try GraphDescription.audio(count: sources.audio.count, c).map { text in
                let inputs = sources.audio.indices.map { i in
                    ProcessingGraph.Input(label: "a\(i)", mediaType: .audio, arguments: "sample_rate=\(format.sampleRate)"
                                          + ":sample_fmt=\(SampleFormat.floatPlanar):channel_layout=\(layout):time_base=1/\(format.sampleRate)")
                }
                return try Self.graph(text, inputs, output: GraphDescription.audioOutput, given: c.audioGraph != nil ? "--filter-complex" : "--af")
            }
            self.audio = try AudioMixer(encoder: audio, format: format, inputs: audioInputs, graph: graph, live: live)
        } else {
            (self.audio, audioInputs) = (nil, [])
        }
    }

    /// Builds a graph; what does not parse or fit is a usage error that names the option.
    private static func graph(_ text: String, _ inputs: [ProcessingGraph.Input], output: String, given option: String) throws -> ProcessingGraph {
        do {
            return try ProcessingGraph(description: text, inputs: inputs, output: output)
        } catch let problem as ProcessingGraph.Problem {
            throw LiveMuxError.usage("\(option) \(text): \(problem)")
        } catch let error as FFmpegError {
            throw LiveMuxError.usage("\(option) \(text): \(error.message) (a filter's option, or the sources' formats, do not fit)")
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
