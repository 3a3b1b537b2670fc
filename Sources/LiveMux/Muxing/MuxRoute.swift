/// One container writer of a session with the sinks it feeds: what `MuxSession` builds from an
/// `OutputGraph.Writer` (the plan) and what its mux thread then writes every packet through. One
/// type from the session's `init` to the last trailer, so an output is not translated on the way.
struct MuxRoute {
    /// nil: the browsers' fragmented MP4 (`BrowserStream`), fed to `/live.mp4` and the HLS playlist.
    let format: ContainerFormat?
    let seekable: Bool
    /// Cuts its one file into segments (`OutputGraph.Writer.segmented`).
    let segmented: Bool
    /// Every destination this writer feeds; a sink that fails or is removed leaves the list.
    var sinks: [ChunkSink] = []
    /// The key of each output's sink in the statistics (its id, `o0`); a sink not here (a viewers'
    /// hub, a caller's own) goes by its name.
    private var keys: [ObjectIdentifier: String] = [:]
    /// Made once the session knows its streams (`MuxSession.start(streams:)` when not at `init`);
    /// a segmented route's is replaced at each cut.
    var writer: ContainerWriter!
    /// A segmented route's one sink and where it is cut (joined at `start`: the sink is made after
    /// the writer).
    var segmentSink: SegmentFileSink?
    var segmenter: Segmenter?
    /// Bytes delivered since the statistics last heard of them (mux thread only): every sink still
    /// here took each of them (one that fails is dropped, with its count, before this grows).
    var unreported = 0

    /// Adds output `id`'s sink.
    mutating func add(_ sink: ChunkSink, id: OutputID) {
        sinks.append(sink)
        keys[ObjectIdentifier(sink)] = id.description
    }

    /// The key `sink`'s figures are kept by in the statistics.
    func key(of sink: ChunkSink) -> String { keys[ObjectIdentifier(sink)] ?? sink.name }

    /// The sink of the output with statistics key `key`, while it is here.
    func sink(keyed key: String) -> ChunkSink? { sinks.first { self.key(of: $0) == key } }

    init(_ plan: OutputGraph.Writer) {
        format = plan.format
        seekable = plan.seekable
        segmented = plan.segmented
    }

    /// The browsers' stream and its sinks.
    init(browserSinks: [ChunkSink]) {
        format = nil
        seekable = false
        segmented = false
        sinks = browserSinks
    }
}
