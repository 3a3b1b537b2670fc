import FFmpeg

/// Makes the video graph of the default composition (`GraphDescription.video`, then `--vf`) for
/// any set of sources, layout and main picture: what `VideoCompositor` builds when the control
/// API changes the layout or adds a source while the job runs.
struct VideoGraphBuilder: Sendable {
    let composition: Composition
    /// The picture's frame rate, which every graph input is told.
    let rate: Rational

    /// The graph's inputs, `[v0]` … one per source, at the size each is converted to.
    func inputs(_ sizes: [(width: Int, height: Int)]) -> [ProcessingGraph.Input] {
        let timeBase = VideoCompositor.timeBase
        return sizes.enumerated().map { i, size in
            let arguments = "video_size=\(size.width)x\(size.height):pix_fmt=\(PixelFormat.yuv420p.rawValue)"
                + ":pixel_aspect=1/1:frame_rate=\(rate.num)/\(rate.den):time_base=\(timeBase.num)/\(timeBase.den)"
            return ProcessingGraph.Input(label: "v\(i)", mediaType: .video, arguments: arguments)
        }
    }

    /// The graph for these sources (`sizes`, the first the picture's), `layout`, `main` picture and
    /// sources left out (`hidden`).
    func graph(sizes: [(width: Int, height: Int)], layout: VideoLayout, main: Int, hidden: Set<Int>) throws -> ProcessingGraph {
        var changed = composition
        changed.layout = layout
        let text = GraphDescription.video(sizes: sizes, changed, main: main, hidden: hidden, always: true)!  // always: a graph
        let given = composition.videoFilter.map { "--vf \($0)" }
        return try SourceGraphs.graph(text, inputs(sizes), output: GraphDescription.videoOutput, given: given)
    }
}
