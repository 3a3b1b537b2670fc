import FFmpeg

/// The filter graphs between a recording's sources and its encoders, built before the encoders
/// (a graph may change the picture's size): the video graph composes the video sources and runs
/// `--vf` (or is the `--filter-complex` that makes `[vout]`), the audio graph mixes and runs
/// `--af`; nil where one source needs none. A graph that does not parse or fit is a usage error.
struct SourceGraphs {
    let video: ProcessingGraph?
    /// Builds the video graph again with another layout and main picture (`VideoCompositor.change`);
    /// nil when the graph is the user's own (`--filter-complex`) or there is none.
    let rebuildVideo: (@Sendable (VideoLayout, Int, Set<Int>) throws -> ProcessingGraph)?
    /// Each video source's size as its graph input takes it (the first one's is the picture's).
    let videoSizes: [(width: Int, height: Int)]
    let audio: ProcessingGraph?

    /// `liveGains`: the audio sources' gains are applied before the graph (`AudioGains`), so the
    /// graph has none of its own and is made even for one source at unity.
    init(_ sources: RecordingSources, composition c: Composition, videoFormat: VideoFormat?, audioFormat: AudioFormat?,
         liveGains: Bool = false) throws {
        if let format = videoFormat {
            let sizes: [(width: Int, height: Int)] = sources.video.map { s in
                s.format.width > 0 && s.format.height > 0 ? (s.format.width, s.format.height) : (format.width, format.height)
            }
            videoSizes = sizes
            let rate = format.fps.rational, timeBase = VideoCompositor.timeBase
            let inputs = sizes.enumerated().map { i, size -> ProcessingGraph.Input in
                let arguments = "video_size=\(size.width)x\(size.height):pix_fmt=\(PixelFormat.yuv420p.rawValue)"
                    + ":pixel_aspect=1/1:frame_rate=\(rate.num)/\(rate.den):time_base=\(timeBase.num)/\(timeBase.den)"
                return ProcessingGraph.Input(label: "v\(i)", mediaType: .video, arguments: arguments)
            }
            video = try GraphDescription.video(sizes: sizes, c).map { text in
                try Self.graph(text, inputs, output: GraphDescription.videoOutput, given: Self.given(c.videoGraph, c.videoFilter, "--vf"))
            }
            if video == nil || c.videoGraph != nil {
                rebuildVideo = nil
            } else {
                let given = Self.given(nil, c.videoFilter, "--vf")
                rebuildVideo = { (layout: VideoLayout, main: Int, hidden: Set<Int>) throws -> ProcessingGraph in
                    var changed = c
                    changed.layout = layout
                    let text = GraphDescription.video(sizes: sizes, changed, main: main, hidden: hidden) ?? "[v0]null[\(GraphDescription.videoOutput)]"
                    return try Self.graph(text, inputs, output: GraphDescription.videoOutput, given: given)
                }
            }
        } else {
            (video, videoSizes, rebuildVideo) = (nil, [], nil)
        }
        if let format = audioFormat {
            let layout = format.channels == 1 ? "mono" : "stereo"
            var mix = c
            if liveGains { mix.gains = [:] }
            audio = try GraphDescription.audio(count: sources.audio.count, sampleRate: format.sampleRate, mix, always: liveGains).map { text in
                let inputs = sources.audio.indices.map { i in
                    ProcessingGraph.Input(label: "a\(i)", mediaType: .audio, arguments: "sample_rate=\(format.sampleRate)"
                                          + ":sample_fmt=\(SampleFormat.floatPlanar):channel_layout=\(layout):time_base=1/\(format.sampleRate)")
                }
                return try Self.graph(text, inputs, output: GraphDescription.audioOutput, given: Self.given(c.audioGraph, c.audioFilter, "--af"))
            }
        } else {
            audio = nil
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
    private static func graph(_ text: String, _ inputs: [ProcessingGraph.Input], output: String, given: String?) throws -> ProcessingGraph {
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
