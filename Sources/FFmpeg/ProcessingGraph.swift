import CFFmpeg

/// A libavfilter graph that processes frames: each labelled open input of the description (`[v0]`,
/// `[a1]`) is fed by a buffer source, and the one labelled output (`[vout]`, `[aout]`) is read
/// through a buffersink, as `ffmpeg -filter_complex` wires its graphs (see FFmpeg's
/// doc/examples/filtering_video.c and filtering_audio.c). Used by one thread at a time.
public final class ProcessingGraph: @unchecked Sendable {
    /// One buffer source: the label it feeds and what its frames are.
    public struct Input: Sendable {
        public let label: String
        public let mediaType: MediaType
        /// The buffer source's arguments (`video_size=…:pix_fmt=…:time_base=…`, or
        /// `sample_rate=…:sample_fmt=…:channel_layout=…:time_base=…`).
        public let arguments: String
        public init(label: String, mediaType: MediaType, arguments: String) {
            (self.label, self.mediaType, self.arguments) = (label, mediaType, arguments)
        }
    }

    /// A graph that parses but does not fit the sources and outputs it is given.
    public enum Problem: Error, CustomStringConvertible, Sendable {
        case unknownFilter(String), unparsable(String), unlabelledInput, unknownLabel(String, known: [String]),
             unusedInput(String), missingOutput(String), extraOutput(String), wrongType(String)
        public var description: String {
            switch self {
            case .unknownFilter(let name): "no filter is named '\(name)' (ffmpeg -filters lists them)"
            case .unparsable(let why): "it does not parse, or a filter refused its options (\(why)): write FILTER=KEY=VALUE:KEY=VALUE, chains joined by ',' and ';'"

            case .unlabelledInput: "a filter's input has no label: name each input after its source ([v0], [a1] …)"
            case .unknownLabel(let l, let known): "[\(l)] names no source (the sources are \(known.map { "[\($0)]" }.joined(separator: " ")))"
            case .unusedInput(let l): "source [\(l)] is not an input of the graph: use it, or leave the source out"
            case .missingOutput(let l): "the graph has no output labelled [\(l)]"
            case .extraOutput(let l): "the graph has an output [\(l)] that goes nowhere: end it in [vout] or [aout]"
            case .wrongType(let l): "[\(l)] is of the other kind: a graph takes video or audio, not both"
            }
        }
    }

    private let api: lm_filter_api
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let sources: [UnsafeMutablePointer<AVFilterContext>]
    private let sink: UnsafeMutablePointer<AVFilterContext>
    /// The time base of the frames that come out.
    public let outputTimeBase: Rational
    /// Video: the size of the frames that come out.
    public let outputWidth: Int, outputHeight: Int

    /// Parses and configures `description`. Every input of `inputs` must be used, every open input
    /// of the graph must name one, and its one open output must be labelled `output`.
    public init(description: String, inputs: [Input], output: String) throws {
        let api = try FilterGraph.api.get()
        guard let graph = api.graph_alloc() else { throw outOfMemory("avfilter_graph_alloc") }
        // Only what we ask for runs on other threads: the graph is fed and read by one thread.
        graph.pointee.nb_threads = 1
        var open: UnsafeMutablePointer<AVFilterInOut>? = nil
        var unconnected: UnsafeMutablePointer<AVFilterInOut>? = nil
        defer {
            api.inout_free(&open)
            api.inout_free(&unconnected)
        }
        var sources = [UnsafeMutablePointer<AVFilterContext>?](repeating: nil, count: inputs.count)
        var sink: UnsafeMutablePointer<AVFilterContext>? = nil
        do {
            let parsed = api.graph_parse_ptr(graph, description, &open, &unconnected, nil)
            if parsed < 0 {
                if let unknown = Self.filterNames(description).first(where: { api.get_by_name($0) == nil }) { throw Problem.unknownFilter(unknown) }
                throw Problem.unparsable(FFmpegError(code: parsed, function: "avfilter_graph_parse_ptr").message)
            }
            var pad = open
            while let p = pad {
                defer { pad = p.pointee.next }
                guard let label = p.pointee.name.map({ String(cString: $0) }) else { throw Problem.unlabelledInput }
                guard let i = inputs.firstIndex(where: { $0.label == label }) else {
                    throw Problem.unknownLabel(label, known: inputs.map(\.label))
                }
                let type = MediaType(api.pad_get_type(p.pointee.filter_ctx.pointee.input_pads, p.pointee.pad_idx))
                guard type == inputs[i].mediaType else { throw Problem.wrongType(label) }
                let filterName = type == .video ? "buffer" : "abuffer"
                guard let filter = api.get_by_name(filterName) else { throw outOfMemory("avfilter_get_by_name(\(filterName))") }
                try check(api.graph_create_filter(&sources[i], filter, "in_\(label)", inputs[i].arguments, nil, graph),
                          "avfilter_graph_create_filter(\(filterName) \(inputs[i].arguments))")
                try check(api.link(sources[i], 0, p.pointee.filter_ctx, UInt32(p.pointee.pad_idx)), "avfilter_link")
            }
            if let unused = inputs.indices.first(where: { sources[$0] == nil }) { throw Problem.unusedInput(inputs[unused].label) }
            pad = unconnected
            while let p = pad {
                defer { pad = p.pointee.next }
                let label = p.pointee.name.map { String(cString: $0) } ?? "unnamed"
                guard label == output, sink == nil else { throw Problem.extraOutput(label) }
                let type = MediaType(api.pad_get_type(p.pointee.filter_ctx.pointee.output_pads, p.pointee.pad_idx))
                guard type == inputs.first?.mediaType else { throw Problem.wrongType(label) }
                sink = try api.linkSink(p, type, named: "out", in: graph)
            }
            guard sink != nil else { throw Problem.missingOutput(output) }
            try check(api.graph_config(graph, nil), "avfilter_graph_config(\(description))")
        } catch {
            var failed: UnsafeMutablePointer<AVFilterGraph>? = graph
            api.graph_free(&failed)
            throw error
        }
        self.api = api
        self.graph = graph
        self.sources = sources.map { $0! }
        self.sink = sink!
        outputTimeBase = Rational(api.buffersink_get_time_base(sink))
        (outputWidth, outputHeight) = (Int(api.buffersink_get_w(sink)), Int(api.buffersink_get_h(sink)))
    }

    deinit { api.graph_free(&graph) }

    /// The filter names of a description, for saying which one does not exist (libavfilter only
    /// logs it): each filter of each chain, without its labels, instance name and options.
    static func filterNames(_ description: String) -> [String] {
        let unlabelled = description.replacing(/\[[^\]]*\]/, with: "")
        return unlabelled.split(whereSeparator: { $0 == ";" || $0 == "," }).compactMap { filter in
            let name = String(filter.prefix { $0 != "=" && $0 != "@" }.filter { !$0.isWhitespace })
            // What is not a name is a piece of an escaped option value, not a filter.
            return name.isEmpty || !name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) ? nil : name
        }
    }

    /// Feeds `frame` (kept: the graph takes a reference) to input `index`; nil ends that input.
    public func send(_ frame: Frame?, to index: Int) throws {
        let keepReference: Int32 = 8  // AV_BUFFERSRC_FLAG_KEEP_REF
        try check(api.buffersrc_add_frame_flags(sources[index], frame?.pointer, frame == nil ? 0 : keepReference),
                  "av_buffersrc_add_frame_flags")
    }

    /// The next frame the graph has ready.
    public func receive(into frame: Frame) throws -> Received<Void> {
        frame.unreference()
        return try received(api.buffersink_get_frame(sink, frame.pointer), (), "av_buffersink_get_frame")
    }
}
