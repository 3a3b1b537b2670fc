import FFmpeg
import POSIX

/// An audio source of the mix after the first: its capture thread converts each frame to the
/// mix's format and lays it on a FIFO placed by capture time; the mixer, on the first source's
/// thread, takes the samples under each of that source's frames (`take`). A source whose clock
/// runs slower or faster than its stamps say (two sound cards never share a crystal) has its
/// samples stretched or squeezed to its stamps by the resampler, once a second, by at most
/// `maxCompensationPPM`, so it stays in place without a cut; a jump past `realignMicroseconds`
/// is placed at once. The FIFO and its placement live in `state`; the converter and the
/// compensation's count belong to the capture thread.
final class AudioSourceInput: FrameConsumer, @unchecked Sendable {
    /// `a1`, `a2` …: the source's label in graphs and stats.
    let label: String
    let meter = LevelMeter()
    private let converter: AudioConverter
    /// Samples converted since the compensation was last set (capture thread).
    private var sinceCompensation = 0
    private let rate: Int
    /// Live: the mixer waits for a late source only so long, and a source that runs ahead drops
    /// nothing. Unpaced (files, synthetic sources read as fast as they go): the mixer waits until
    /// the samples are there, and a source that runs `capacity` ahead waits for it.
    private let live: Bool
    private let capacity: Int
    private struct State {
        let fifo: AudioFIFO
        /// The capture time (µs) of sample `anchorIndex`; nil before the first frame.
        var anchorTime: Int64?
        var anchorIndex: Int64 = 0
        /// The sample index of the FIFO's first sample (indices count from the first frame).
        var headIndex: Int64 = 0
        var ended = false
        /// The mix wants no more.
        var closed = false
        /// The last take found the source late at its deadline: the mix does not wait for it again
        /// until a take finds its samples there.
        var late = false
        /// How far (samples, smoothed) frames land after where the FIFO ends: positive when the
        /// source delivers fewer samples than its stamps say (its clock is slow).
        var drift = 0.0
    }
    private let state: Locked<State>

    /// A frame that lands further than this (µs) from where the last one ended is placed at its
    /// own time (silence fills a gap, an overlap is dropped): the source's clock drifted or stepped.
    static let realignMicroseconds: Int64 = 20_000
    /// Seconds an unpaced source may run ahead of the mix.
    static let aheadSeconds = 2
    /// The drift is smoothed over this many frames, and taken out once it passes
    /// `driftDeadbandMicroseconds`, half of it each second, at most `maxCompensationPPM`. A
    /// device's stamps wander by several ms while its clock settles in the first seconds: followed
    /// at 1 ms and 1000 ppm, the second of two microphones fed by one clock moved 4.4 ms in 6 s.
    /// 200 ppm (0.35 cents, unheard) covers two sound cards 100 ppm off each, and moves a source
    /// by 0.2 ms a second at most.
    static let driftSmoothing = 32.0
    static let driftDeadbandMicroseconds = 5_000.0
    static let maxCompensationPPM = 200

    init(label: String, format: AudioFormat, live: Bool) throws {
        self.label = label
        converter = AudioConverter(to: format, compensates: true)
        rate = format.sampleRate
        self.live = live
        capacity = format.sampleRate * Self.aheadSeconds
        state = Locked(State(fifo: try AudioFIFO(format: .floatPlanar, channels: format.channels, sampleRate: format.sampleRate)))
    }

    var isDone: Bool { state.withLock { $0.closed } }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        guard let converted = try converter.convert(frame) else { return !isDone }
        meter.observe(converted.peakAmplitude, at: time)
        let hasRoom = { [live, capacity] (s: State) in live || s.fifo.count < capacity || s.closed }
        let placed = try state.withLock(waitingUntil: hasRoom) { s, _ -> Double? in
            if s.closed { return nil }
            try place(converted, at: time, held: converter.delay, in: &s)
            return s.drift
        }
        state.broadcast()
        guard let drift = placed else { return false }
        try compensate(drift, after: converted.sampleCount)
        return true
    }

    /// Once a second: the next second's samples take out half the drift (at most
    /// `maxCompensationPPM` of them), or none inside the deadband.
    private func compensate(_ drift: Double, after samples: Int) throws {
        sinceCompensation += samples
        guard sinceCompensation >= rate else { return }
        sinceCompensation = 0
        let deadband = Double(rate) * Self.driftDeadbandMicroseconds / 1e6, most = rate * Self.maxCompensationPPM / 1_000_000
        let delta = abs(drift) < deadband ? 0 : max(-most, min(most, Int((drift / 2).rounded())))
        try converter.compensate(samples: delta, over: rate)
    }

    /// Appends `frame` after what the FIFO holds, or at its own time when that is further than
    /// `realignMicroseconds` away. The first is placed `held` samples late: the converter held
    /// back that many of its end, so placed at its time it would never cover its own span and the
    /// mix would wait for every next frame.
    private func place(_ frame: Frame, at time: Int64, held: @autoclosure () -> Int, in s: inout State) throws {
        guard let anchor = s.anchorTime else {
            let late = Timestamp.rescale(Int64(held()), from: Rational(1, Int32(rate)), to: .microseconds)
            (s.anchorTime, s.anchorIndex) = (time + late, s.headIndex)
            try s.fifo.write(frame, from: 0, count: frame.sampleCount)
            return
        }
        let end = s.headIndex + Int64(s.fifo.count)
        let at = s.anchorIndex + Timestamp.rescale(time - anchor, from: .microseconds, to: Rational(1, Int32(rate)))
        let gap = at - end
        let threshold = Timestamp.rescale(Self.realignMicroseconds, from: .microseconds, to: Rational(1, Int32(rate)))
        var skip = 0
        // Placed at its own time: what drifted is gone.
        if abs(gap) > threshold { s.drift = 0 }
        if gap > Int64(capacity) {
            // A jump no silence should fill (a clock stepped): start over at this frame.
            s.headIndex += Int64(s.fifo.count)
            s.fifo.drain(s.fifo.count)
            (s.anchorTime, s.anchorIndex) = (time, s.headIndex)
        } else if gap > threshold {
            try writeSilence(Int(gap), to: s.fifo)
        } else if gap < -threshold {
            skip = Int(min(-gap, Int64(frame.sampleCount)))
        } else {
            s.drift += (Double(gap) - s.drift) / Self.driftSmoothing
        }
        try s.fifo.write(frame, from: skip, count: frame.sampleCount - skip)
    }

    private func writeSilence(_ count: Int, to fifo: AudioFIFO) throws {
        let silence = try Frame.silence(samples: count, format: .floatPlanar, sampleRate: rate, channels: converter.format.channels)
        try fifo.write(silence, from: 0, count: count)
    }

    /// The `count` samples from capture time `time` on, silence where the source has none (it
    /// started later, is away, or is later than `deadline`, µs on the monotonic clock; nil waits
    /// as long as it takes). What the mix took is gone: samples for it that come later are dropped.
    /// A live source found late is not waited for again until it has caught up: one that is away
    /// (filled 200 ms behind the clock: `DeviceReopening.fillLag`) or stalled would make every
    /// frame wait the whole `deadline`, and the mix fall behind the clock by the fill's lag.
    func take(at time: Int64, count: Int, deadline: Int64?) throws -> Frame {
        let n = Int64(count)
        let rate = Rational(1, Int32(self.rate))
        let start = { (s: State) in s.anchorTime.map { s.anchorIndex + Timestamp.rescale(time - $0, from: .microseconds, to: rate) } }
        let covered = { (s: State) -> Bool in
            if s.ended || s.closed { return true }
            guard let first = start(s) else { return false }
            return s.headIndex + Int64(s.fifo.count) >= first + n
        }
        // A full FIFO wakes the mix too: what it holds before this stretch is dropped, so that a
        // source far ahead of a stretch it never filled makes room and goes on.
        let wake = { [capacity] (s: State) in covered(s) || s.fifo.count >= capacity }
        let out = try Frame.silence(samples: count, format: .floatPlanar, sampleRate: self.rate, channels: converter.format.channels)
        let wait = live ? (state.withLock { $0.late } ? 0 : deadline) : nil
        var taken = false
        while !taken {
            taken = try state.withLock(waitingUntil: wake, deadline: wait) { s, _ in
                s.late = live && !covered(s)
                guard let first = start(s) else { return true }
                if first > s.headIndex {
                    s.fifo.drain(Int(min(first - s.headIndex, Int64(Int.max))))
                    s.headIndex = first
                }
                // Unpaced, the stretch is waited for however long it takes.
                guard live || covered(s) else { return false }
                let offset = Int(min(s.headIndex - first, n))
                s.headIndex += Int64(try s.fifo.read(into: out, at: offset, samples: count - offset))
                // Samples for this stretch that come later are late: the mix has gone on without them.
                if s.headIndex < first + n && s.fifo.count == 0 { s.headIndex = first + n }
                return true
            }
            state.broadcast()
        }
        return out
    }

    /// The mix is over: a source waiting for room stops.
    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
    }

    /// The source ended: the mix takes silence from now on.
    func finish() throws {
        state.withLock { $0.ended = true }
        state.broadcast()
    }
}
