import CFFmpeg

/// A libavfilter graph of source filters (`testsrc2`, `sine`, `movie=…`), read through one sink
/// per open output: what `ffmpeg -f lavfi -i GRAPH` reads, without libavdevice's lavfi device,
/// which copies every frame into a packet for a rawvideo decoder to turn back into a frame. Here
/// a frame leaves the filters as it is, still in libavfilter's buffer pool.
///
/// libavfilter is loaded at run time, like libavdevice (see `lm_load_filters` in shim.h).
/// Used by its capture thread only.
public final class FilterGraph: @unchecked Sendable {
    /// The source name that selects a filter graph, as in `lavfi:testsrc2`.
    public static let formatName = "lavfi"
    /// How long to wait before asking a sink again that had nothing yet (µs).
    static let retryMicroseconds: UInt32 = 2000

    /// A graph that parses but cannot be a source.
    public enum Problem: Error, CustomStringConvertible, Sendable {
        case unconnectedInput, noOutput, outputNeitherVideoNorAudio
        public var description: String {
            switch self {
            case .unconnectedInput: "a filter's input is not connected: start the graph with a source filter such as testsrc2 or sine"
            case .noOutput: "the graph has no open output"
            case .outputNeitherVideoNorAudio: "an output of the graph is neither video nor audio"
            }
        }
    }

    public struct Output: Sendable {
        public let index: Int
        public let mediaType: MediaType
        public let timeBase: Rational
        /// Video: the frame rate (1/0 or 0/1 when variable or unknown) and size; 0 for audio.
        public let frameRate: Rational
        public let width: Int
        public let height: Int
        /// Audio: the sample rate and channel count; 0 for video.
        public let sampleRate: Int
        public let channels: Int
    }

    /// The function table, filled once; a failure to load says why.
    static let api: Result<lm_filter_api, FilterLibraryError> = {
        if let reason = lm_load_filters() { return .failure(FilterLibraryError(reason: String(cString: reason))) }
        return .success(lm_filter_api_slot().pointee)
    }()

    private let api: lm_filter_api
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let sinks: [UnsafeMutablePointer<AVFilterContext>]
    public let outputs: [Output]
    /// With several outputs, the next frame of each, so that they come out in time order.
    private let waiting: [Frame]
    private var hasWaiting: [Bool]
    private var ended: [Bool]

    /// Parses and configures `description`; every open output gets a sink that takes any format.
    public init(description: String) throws {
        let api = try Self.api.get()
        guard let graph = api.graph_alloc() else { throw outOfMemory("avfilter_graph_alloc") }
        var inputs: UnsafeMutablePointer<AVFilterInOut>? = nil
        var opened: UnsafeMutablePointer<AVFilterInOut>? = nil
        defer {
            api.inout_free(&inputs)
            api.inout_free(&opened)
        }
        var sinks: [UnsafeMutablePointer<AVFilterContext>] = []
        var types: [MediaType] = []
        let waiting: [Frame]
        do {
            try check(api.graph_parse_ptr(graph, description, &inputs, &opened, nil), "avfilter_graph_parse_ptr(\(description))")
            if inputs != nil { throw Problem.unconnectedInput }
            // Outputs in the order of their labels, out0, out1…, as libavdevice's lavfi numbers
            // its streams (libavfilter lists them last first).
            var pads: [UnsafeMutablePointer<AVFilterInOut>] = []
            var open = opened
            while let pad = open {
                pads.insert(pad, at: 0)
                open = pad.pointee.next
            }
            let labelNumber = { (pad: UnsafeMutablePointer<AVFilterInOut>) -> Int in
                guard let name = pad.pointee.name.map({ String(cString: $0) }), name.hasPrefix("out") else { return Int.max }
                return Int(name.dropFirst(3)) ?? 0
            }
            pads = pads.enumerated().sorted { (labelNumber($0.element), $0.offset) < (labelNumber($1.element), $1.offset) }.map(\.element)
            for pad in pads {
                let type = api.pad_get_type(pad.pointee.filter_ctx.pointee.output_pads, pad.pointee.pad_idx)
                let mediaType = MediaType(type)
                guard mediaType != .other else { throw Problem.outputNeitherVideoNorAudio }
                sinks.append(try api.linkSink(pad, mediaType, named: "out\(sinks.count)", in: graph))
                types.append(mediaType)
            }
            if sinks.isEmpty { throw Problem.noOutput }
            try check(api.graph_config(graph, nil), "avfilter_graph_config(\(description))")
            waiting = try sinks.map { _ in try Frame() }
        } catch {
            var failed: UnsafeMutablePointer<AVFilterGraph>? = graph
            api.graph_free(&failed)
            throw error
        }
        self.api = api
        self.graph = graph
        self.sinks = sinks
        // The time bases and formats are known once the graph is configured.
        outputs = types.indices.map { [api] i in
            let sink = sinks[i]
            return Output(index: i, mediaType: types[i], timeBase: Rational(api.buffersink_get_time_base(sink)),
                          frameRate: Rational(api.buffersink_get_frame_rate(sink)),
                          width: Int(api.buffersink_get_w(sink)), height: Int(api.buffersink_get_h(sink)),
                          sampleRate: Int(api.buffersink_get_sample_rate(sink)), channels: Int(api.buffersink_get_channels(sink)))
        }
        self.waiting = waiting
        hasWaiting = Array(repeating: false, count: sinks.count)
        ended = Array(repeating: false, count: sinks.count)
    }

    deinit { api.graph_free(&graph) }

    /// The first output of a type.
    public func firstOutput(_ type: MediaType) -> Output? { outputs.first { $0.mediaType == type } }

    /// Moves the next frame into `frame` and returns the index of its output: with several
    /// outputs, the one whose next frame is earliest. Nil once every output has ended.
    public func read(into frame: Frame) throws -> Int? {
        frame.unreference()
        if sinks.count == 1 {
            return try pull(0, into: frame) ? 0 : nil
        }
        for i in sinks.indices where !hasWaiting[i] && !ended[i] {
            hasWaiting[i] = try pull(i, into: waiting[i])
            ended[i] = !hasWaiting[i]
        }
        var earliest: Int? = nil
        for i in sinks.indices where hasWaiting[i] {
            guard let e = earliest else { earliest = i; continue }
            if Timestamp.compare(waiting[i].pts, outputs[i].timeBase, waiting[e].pts, outputs[e].timeBase) < 0 { earliest = i }
        }
        guard let i = earliest else { return nil }
        av_frame_move_ref(frame.pointer, waiting[i].pointer)
        hasWaiting[i] = false
        return i
    }

    /// One frame from sink `i`; false at its end.
    private func pull(_ i: Int, into frame: Frame) throws -> Bool {
        while true {
            switch try received(api.buffersink_get_frame(sinks[i], frame.pointer), frame, "av_buffersink_get_frame") {
            case .value: return true
            case .endOfStream: return false
            // Only a graph that waits on something outside it (none of the source filters do)
            // has nothing yet.
            case .needsInput: av_usleep(Self.retryMicroseconds)
            }
        }
    }
}
