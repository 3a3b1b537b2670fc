import FFmpeg
import POSIX

/// The video stage between the sources and the encoder, on the encoder's thread, when there are
/// several video sources or a `--vf` / `--filter-complex` graph: each frame of the first source
/// goes into the graph with the frame every other source shows at that instant
/// (`VideoSourceInput.frame(at:)`), all stamped alike, so the graph never waits for a source; what
/// comes out goes to the encoder at the first source's capture times. While the job runs, the
/// control API may ask for another layout or add a source: the graph is ended (what it holds
/// goes on) and the next one built before the next frame.
final class VideoCompositor: FrameConsumer, @unchecked Sendable {
    // Used by the video encoder's thread only.
    private let encoder: FrameConsumer
    private var inputs: [VideoSourceInput]
    private var graph: ProcessingGraph
    /// Builds the graph for another layout, main picture or set of sources; nil: it cannot change.
    private let rebuild: VideoGraphBuilder?
    /// What the graph was last built for.
    private var shape: Shape
    struct Shape { var layout: VideoLayout; var main = 0; var hidden: Set<Int> = [] }
    /// What the control API asked for, taken at the next frame: another shape, sources that join.
    private struct Asked { var shape: Shape?; var joining: [VideoSourceInput] = []; var finished = false }
    private let asked = Locked(Asked())
    /// The first source's pictures, as its graph input takes them.
    private let converter: PictureConverter
    /// Shown for a source before its first frame, and while its device is left out.
    private var blank: [Frame]
    /// The first frame's capture time: graph timestamps count µs from it.
    private var start: Int64?
    private var lastPTS = Int64.min
    /// Each source's size as its graph input takes it: the first's is the picture's.
    private var sizes: [(width: Int, height: Int)] { [(converter.width, converter.height)] + inputs.map { ($0.width, $0.height) } }
    /// Wall times of the frames fed, by graph timestamp, for the capture → bytes latency.
    private var wallTimes: [(pts: Int64, wall: Int64)] = []
    private let composed: Frame

    /// The graph's time base: capture-clock microseconds.
    static let timeBase = Rational(1, 1_000_000)

    init(encoder: FrameConsumer, width: Int, height: Int, inputs: [VideoSourceInput], graph: ProcessingGraph,
         rebuild: VideoGraphBuilder? = nil) throws {
        self.encoder = encoder
        self.rebuild = rebuild
        shape = Shape(layout: rebuild?.composition.layout ?? .pip)
        converter = PictureConverter(width: width, height: height)
        self.inputs = inputs
        self.graph = graph
        blank = try inputs.map { try Frame.black(width: $0.width, height: $0.height) }
        composed = try Frame()
    }

    var isDone: Bool { encoder.isDone }

    /// Whether the layout and main picture can change while running.
    var canChange: Bool { rebuild != nil }

    /// Asks for another layout, main picture and sources left out (any thread), from the next frame on.
    func change(layout: VideoLayout, main: Int, hidden: Set<Int>) { asked.withLock { $0.shape = Shape(layout: layout, main: main, hidden: hidden) } }

    /// Adds a source to the picture (any thread), from the next frame on, where the layout puts
    /// the next one; false once the composition is over (the input is closed then).
    func join(_ input: VideoSourceInput) -> Bool {
        let open = asked.withLock { a in
            if !a.finished { a.joining.append(input) }
            return !a.finished
        }
        if !open { input.close() }
        return open
    }

    /// Ends the graph (what it holds goes to the encoder) and builds the one asked for.
    private func applyChange(_ start: Int64) throws -> Bool {
        guard let rebuild else { return true }
        let (change, joining) = asked.withLock { a in
            defer { (a.shape, a.joining) = (nil, []) }
            return (a.shape, a.joining)
        }
        guard change != nil || !joining.isEmpty else { return true }
        let next = change ?? shape
        let nextGraph = try rebuild.graph(sizes: sizes + joining.map { ($0.width, $0.height) }, layout: next.layout, main: next.main,
                                          hidden: next.hidden)
        for i in 0...inputs.count { try graph.send(nil, to: i) }
        let more = try handOn(start)
        graph = nextGraph
        shape = next
        inputs += joining
        blank += try joining.map { try Frame.black(width: $0.width, height: $0.height) }
        return more
    }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        let start = self.start ?? time
        self.start = start
        let pts = time - start
        guard pts > lastPTS else { return true }  // the encoder drops it too: it has no slot
        lastPTS = pts
        guard try applyChange(start) else { return false }
        let first = try converter.convert(frame)
        first.pts = pts
        try graph.send(first, to: 0)
        for (i, input) in inputs.enumerated() {
            // A source removed is out of the picture: it is not waited for, nor said to freeze.
            let shown = try (shape.hidden.contains(i + 1) ? blank[i] : input.frame(at: time) ?? blank[i]).reference()
            shown.pts = pts
            try graph.send(shown, to: i + 1)
        }
        wallTimes.append((pts, wallTime))
        return try handOn(start)
    }

    private func handOn(_ start: Int64) throws -> Bool {
        while case .value = try graph.receive(into: composed) {
            let pts = Timestamp.rescale(composed.pts, from: graph.outputTimeBase, to: Self.timeBase)
            while wallTimes.count > 1, wallTimes[1].pts <= pts { wallTimes.removeFirst() }
            let wall = wallTimes.first?.wall ?? start
            if try !encoder.consume(composed, at: start + pts, capturedAt: wall) { return false }
        }
        return true
    }

    func finish() throws {
        let joining = asked.withLock { a in
            a.finished = true
            return a.joining
        }
        (inputs + joining).forEach { $0.close() }
        if let start, !encoder.isDone {
            for i in 0...inputs.count { try graph.send(nil, to: i) }
            _ = try handOn(start)
        }
        try encoder.finish()
    }
}
