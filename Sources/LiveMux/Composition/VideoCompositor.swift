import FFmpeg
import POSIX

/// The video stage between the sources and the encoder, on the encoder's thread, when there are
/// several video sources or a `--vf` / `--filter-complex` graph: each frame of the first source
/// goes into the graph with the frame every other source shows at that instant
/// (`VideoSourceInput.frame(at:)`), all stamped alike, so the graph never waits for a source; what
/// comes out goes to the encoder at the first source's capture times.
final class VideoCompositor: FrameConsumer, @unchecked Sendable {
    // Used by the video encoder's thread only.
    private let encoder: FrameConsumer
    private let inputs: [VideoSourceInput]
    private var graph: ProcessingGraph
    /// Builds the graph for another layout and main picture; nil: the graph cannot change.
    private let rebuild: (@Sendable (VideoLayout, Int, Set<Int>) throws -> ProcessingGraph)?
    /// A layout, main picture and sources left out asked for (the control API), taken at the next frame.
    private let asked = Locked<(layout: VideoLayout, main: Int, hidden: Set<Int>)?>(nil)
    /// The first source's pictures, as its graph input takes them.
    private let converter: PictureConverter
    /// Shown for a source before its first frame, and while its device is left out.
    private let blank: [Frame]
    /// The first frame's capture time: graph timestamps count µs from it.
    private var start: Int64?
    private var lastPTS = Int64.min
    /// Wall times of the frames fed, by graph timestamp, for the capture → bytes latency.
    private var wallTimes: [(pts: Int64, wall: Int64)] = []
    private let composed: Frame

    /// The graph's time base: capture-clock microseconds.
    static let timeBase = Rational(1, 1_000_000)

    init(encoder: FrameConsumer, width: Int, height: Int, inputs: [VideoSourceInput], graph: ProcessingGraph,
         rebuild: (@Sendable (VideoLayout, Int, Set<Int>) throws -> ProcessingGraph)? = nil) throws {
        self.encoder = encoder
        self.rebuild = rebuild
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
    func change(layout: VideoLayout, main: Int, hidden: Set<Int>) { asked.withLock { $0 = (layout, main, hidden) } }

    /// Ends the graph (what it holds goes to the encoder) and builds the one asked for.
    private func applyChange(_ start: Int64) throws -> Bool {
        guard let rebuild, let change = asked.withLock({ a in defer { a = nil }; return a }) else { return true }
        let next = try rebuild(change.layout, change.main, change.hidden)
        for i in 0...inputs.count { try graph.send(nil, to: i) }
        let more = try handOn(start)
        graph = next
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
            let shown = try (input.frame(at: time) ?? blank[i]).reference()
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
        inputs.forEach { $0.close() }
        if let start, !encoder.isDone {
            for i in 0...inputs.count { try graph.send(nil, to: i) }
            _ = try handOn(start)
        }
        try encoder.finish()
    }
}
