import FFmpeg

/// The audio stage between the sources and the encoder, on the first audio source's thread: it
/// meters that source, and when there are other sources or an `--af` / `--filter-complex` graph,
/// feeds each of the first source's frames and the other sources' samples under it
/// (`AudioSourceInput.take`) to the graph in lockstep, and hands what comes out to the encoder at
/// the first source's capture times. With one source and no graph, frames pass as they are.
final class AudioMixer: FrameConsumer, @unchecked Sendable {
    // Used by the first audio source's capture thread only.
    let meter = LevelMeter()
    private let encoder: FrameConsumer
    private let inputs: [AudioSourceInput]
    private let graph: ProcessingGraph?
    private let converter: AudioConverter
    private var sampleRate: Rational { Rational(1, Int32(converter.format.sampleRate)) }
    /// How long (µs) the mix waits for another source's samples; nil waits until they are there
    /// (unpaced sources).
    private let waitLimit: Int64?
    /// Samples fed so far: the graph's timestamps.
    private var fed: Int64 = 0
    /// Where the fed samples were captured: (sample, capture time, wall time) per frame fed.
    private var anchors: [(sample: Int64, time: Int64, wall: Int64)] = []
    private let mixed: Frame

    /// How long a live mix waits for a late source: longer than a device's packet interval
    /// (pulse: 10–25 ms), short against an AAC frame (21 ms) plus the encoder's own wait.
    static let liveWaitMicroseconds: Int64 = 40_000

    init(encoder: FrameConsumer, format: AudioFormat, inputs: [AudioSourceInput], graph: ProcessingGraph?, live: Bool) throws {
        self.encoder = encoder
        self.inputs = inputs
        self.graph = graph
        converter = AudioConverter(to: format)
        waitLimit = live ? Self.liveWaitMicroseconds : nil
        mixed = try Frame()
    }

    var isDone: Bool { encoder.isDone }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        meter.observe(frame.peakAmplitude, at: time)
        guard let graph else { return try encoder.consume(frame, at: time, capturedAt: wallTime) }
        guard let first = try converter.convert(frame) else { return true }
        let count = first.sampleCount
        let deadline = waitLimit.map { Timestamp.monotonicMicroseconds() + $0 }
        let others = try inputs.map { try $0.take(at: time, count: count, deadline: deadline) }
        anchors.append((fed, time, wallTime))
        for (i, input) in ([first] + others).enumerated() {
            input.pts = fed
            try graph.send(input, to: i)
        }
        fed += Int64(count)
        return try handOn(graph)
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
        inputs.forEach { $0.close() }
        if let graph, !encoder.isDone {
            for i in 0...inputs.count { try graph.send(nil, to: i) }
            _ = try handOn(graph)
        }
        try encoder.finish()
    }
}
