import FFmpeg

/// The filter graphs between a recording's sources and its encoders, built before the encoders
/// (a graph may change the picture's size): the video graph composes the video sources and runs
/// `--vf` (or is the `--filter-complex` that makes `[vout]`), the audio graph mixes and runs
/// `--af`; nil where one source needs none. A graph that does not parse or fit is a usage error.
struct SourceGraphs {
    let video: ProcessingGraph?
    /// Builds the video graph again with another layout, main picture or set of sources
    /// (`VideoCompositor.change`, `.join`); nil when the graph is the user's own (`--filter-complex`)
    /// or there is none.
    let rebuildVideo: VideoGraphBuilder?
    /// Each video source's size as its graph input takes it (the first one's is the picture's).
    let videoSizes: [(width: Int, height: Int)]
    let audio: ProcessingGraph?
    /// Builds the mix again for another number of sources (`AudioMixer.join`); nil when the graph
    /// is the user's own or the job cannot change.
    let rebuildAudio: (@Sendable (Int) throws -> ProcessingGraph)?

    /// `live`: the job may change while it runs (the control API). The audio sources' gains are
    /// then applied before the graph (`AudioGains`), so the graph has none of its own, and both
    /// graphs are made even for one source, so a source added later has one to join.
    init(_ sources: RecordingSources, composition c: Composition, videoFormat: VideoFormat?, audioFormat: AudioFormat?,
         live: Bool = false) throws {
        if let format = videoFormat {
            let sizes: [(width: Int, height: Int)] = sources.video.map { s in
                s.format.width > 0 && s.format.height > 0 ? (s.format.width, s.format.height) : (format.width, format.height)
            }
            videoSizes = sizes
            let builder = VideoGraphBuilder(composition: c, rate: format.fps.rational)
            video = try GraphDescription.video(sizes: sizes, c, always: live).map { text in
                try Self.graph(text, builder.inputs(sizes), output: GraphDescription.videoOutput, given: Self.given(c.videoGraph, c.videoFilter, "--vf"))
            }
            rebuildVideo = video == nil || c.videoGraph != nil ? nil : builder
        } else {
            (video, videoSizes, rebuildVideo) = (nil, [], nil)
        }
        if let format = audioFormat {
            let layout = format.channels == 1 ? "mono" : "stereo"
            var gainless = c
            if live { gainless.gains = [:] }
            let mix = gainless
            let given = Self.given(c.audioGraph, c.audioFilter, "--af")
            let build = { @Sendable (count: Int) throws -> ProcessingGraph? in
                try GraphDescription.audio(count: count, sampleRate: format.sampleRate, mix, always: live).map { text in
                    let inputs = (0..<count).map { i in
                        ProcessingGraph.Input(label: "a\(i)", mediaType: .audio, arguments: "sample_rate=\(format.sampleRate)"
                                              + ":sample_fmt=\(SampleFormat.floatPlanar):channel_layout=\(layout):time_base=1/\(format.sampleRate)")
                    }
                    return try Self.graph(text, inputs, output: GraphDescription.audioOutput, given: given)
                }
            }
            audio = try build(sources.audio.count)
            if live && c.audioGraph == nil {
                rebuildAudio = { count in try build(count)! }  // always: a graph for any count
            } else {
                rebuildAudio = nil
            }
        } else {
            (audio, rebuildAudio) = (nil, nil)
        }
    }

    /// The picture size the video graph makes, when it makes another than its first source's.
    var videoOutputSize: (width: Int, height: Int)? {
        guard let video, let first = videoSizes.first, (video.outputWidth, video.outputHeight) != (first.width, first.height) else { return nil }
        return (video.outputWidth, video.outputHeight)
    }

    /// How a message names the graph: the option and the text the user gave, else (the
    /// default layout or mix alone) the whole graph.
    private static func given(_ graph: String?, _ filter: String?, _ option: String) -> String? {
        graph.map { "--filter-complex \($0)" } ?? filter.map { "\(option) \($0)" }
    }

    /// Builds a graph; what does not parse or fit is a usage error that names the option.
    static func graph(_ text: String, _ inputs: [ProcessingGraph.Input], output: String, given: String?) throws -> ProcessingGraph {
        let name = given ?? "the graph \(text)"
        do {
            return try ProcessingGraph(description: text, inputs: inputs, output: output)
        } catch let problem as ProcessingGraph.Problem {
            throw LiveMuxError.usage("\(name): \(problem)")
        } catch let error as FFmpegError {
            throw LiveMuxError.usage("\(name): \(error.message) (a filter's option, or the sources' formats, do not fit)")
        }
    }
}
