import FFmpeg
import POSIX

/// The audio stage between the sources and the encoder, on the first audio source's thread: it
/// meters that source, and when there are other sources or an `--af` / `--filter-complex` graph,
/// feeds each of the first source's frames and the other sources' samples under it
/// (`AudioSourceInput.take`) to the graph in lockstep, and hands what comes out to the encoder at
/// the first source's capture times. With one source and no graph, frames pass as they are. A
/// source added while the job runs joins at a frame's start: the graph is ended (what it holds
/// goes on) and one with another input built.
final class AudioMixer: FrameConsumer, @unchecked Sendable {
    // Used by the first audio source's capture thread only.
    let meter = LevelMeter()
    private let encoder: FrameConsumer
    private var inputs: [AudioSourceInput]
    private var graph: ProcessingGraph?
    /// Builds the mix for another number of sources; nil: no source can join.
    private let rebuild: (@Sendable (Int) throws -> ProcessingGraph)?
    /// Sources added (any thread), taken at the next frame; `finished`: the mix is over.
    private let joining = Locked<(inputs: [AudioSourceInput], finished: Bool)>(([], false))
    /// Each source's live volume and mute (the control API's), applied before the graph; nil:
    /// the gains are in the graph (`--volume`, `--mute`).
    private let gains: AudioGains?
    private let converter: AudioConverter
    private var sampleRate: Rational { Rational(1, Int32(converter.format.sampleRate)) }
    /// How long (µs) the mix waits for another source's samples; nil waits until they are there
    /// (unpaced sources).
    private let waitLimit: Int64?
    /// Samples fed so far: the graph's timestamps.
    private var fed: Int64 = 0
    /// Where the fed samples were captured: (sample, capture time, wall time) per frame fed.
    private var anchors: [(sample: Int64, time: Int64, wall: Int64)] = []
    /// The mix's clock: the first source's capture time at sample `sample` of what was fed. The
    /// other sources are taken at it, not at each frame's own stamp: a device's stamps wander
    /// around its sample count (pulse: 10 ms and more), and following them would cut or pad the
    /// other sources' samples at every frame and move them against the first.
    private var clock: (time: Int64, sample: Int64)?
    private let mixed: Frame

    /// How long a live mix waits for a late source: longer than a device's packet interval
    /// (pulse: 10–25 ms), short against an AAC frame (21 ms) plus the encoder's own wait.
    static let liveWaitMicroseconds: Int64 = 40_000

    init(encoder: FrameConsumer, format: AudioFormat, inputs: [AudioSourceInput], graph: ProcessingGraph?, gains: AudioGains? = nil,
         rebuild: (@Sendable (Int) throws -> ProcessingGraph)? = nil, live: Bool) throws {
        precondition(gains == nil || graph != nil, "live gains go through a graph")
        precondition(rebuild == nil || graph != nil, "a source joins a graph")
        self.encoder = encoder
        self.inputs = inputs
        self.graph = graph
        self.rebuild = rebuild
        self.gains = gains
        converter = AudioConverter(to: format)
        waitLimit = live ? Self.liveWaitMicroseconds : nil
        mixed = try Frame()
    }

    var isDone: Bool { encoder.isDone }

    /// Whether a source can join (the mix is LiveMux's own and the job may change).
    var canJoin: Bool { rebuild != nil }

    /// Adds a source to the mix (any thread), from the first source's next frame; false once the
    /// mix is over (the input is closed then).
    func join(_ input: AudioSourceInput) -> Bool {
        let open = canJoin && joining.withLock { j in
            if !j.finished { j.inputs.append(input) }
            return !j.finished
        }
        if !open { input.close() }
        return open
    }

    /// Ends the graph (what it holds goes to the encoder) and builds one with the sources that joined.
    private func applyJoins() throws -> Bool {
        guard let rebuild, let old = graph else { return true }
        let added = joining.withLock { j in
            defer { j.inputs = [] }
            return j.inputs
        }
        guard !added.isEmpty else { return true }
        let next = try rebuild(1 + inputs.count + added.count)
        for i in 0...inputs.count { try old.send(nil, to: i) }
        let more = try handOn(old)
        (graph, inputs) = (next, inputs + added)
        return more
    }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        meter.observe(frame.peakAmplitude, at: time)
        guard try applyJoins() else { return false }
        guard let graph else { return try encoder.consume(frame, at: time, capturedAt: wallTime) }
        guard let first = try converter.convert(frame) else { return true }
        let count = first.sampleCount
        let deadline = waitLimit.map { Timestamp.monotonicMicroseconds() + $0 }
        let at = mixTime(following: time)
        let others = try inputs.map { try $0.take(at: at, count: count, deadline: deadline) }
        anchors.append((fed, time, wallTime))
        for (i, frame) in ([first] + others).enumerated() {
            let input = try gains?.apply(i, to: frame) ?? frame
            input.pts = fed
            try graph.send(input, to: i)
        }
        fed += Int64(count)
        return try handOn(graph)
    }

    /// Where the frame the first source stamped `time` starts on the mix's clock: after what was
    /// fed, unless the stamp is further than `AudioSourceInput.realignMicroseconds` away (the
    /// source's clock stepped, or it came back after a gap), where the clock starts over.
    private func mixTime(following time: Int64) -> Int64 {
        let expected = clock.map { $0.time + Timestamp.rescale(fed - $0.sample, from: sampleRate, to: .microseconds) }
        guard let expected, abs(time - expected) <= AudioSourceInput.realignMicroseconds else {
            clock = (time, fed)
            return time
        }
        return expected
    }

    /// Hands every frame the graph has ready to the encoder, at the capture time of its first
    /// sample; false once the encoder wants no more.
    private func handOn(_ graph: ProcessingGraph) throws -> Bool {
        while case .value = try graph.receive(into: mixed) {
            let sample = Timestamp.rescale(mixed.pts, from: graph.outputTimeBase, to: sampleRate)
            while anchors.count > 1, anchors[1].sample <= sample { anchors.removeFirst() }
            guard let anchor = anchors.first else { continue }
            let time = anchor.time + Timestamp.rescale(sample - anchor.sample, from: sampleRate, to: .microseconds)
            if try !encoder.consume(mixed, at: time, capturedAt: anchor.wall) { return false }
        }
        return true
    }

    func finish() throws {
        let joining = joining.withLock { j in
            j.finished = true
            return j.inputs
        }
        (inputs + joining).forEach { $0.close() }
        if let graph, !encoder.isDone {
            for i in 0...inputs.count { try graph.send(nil, to: i) }
            _ = try handOn(graph)
        }
        try encoder.finish()
    }
}
