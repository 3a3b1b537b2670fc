import FFmpeg
import POSIX

/// A `Muxer`'s audio stream on its way in: normalizes AAC into raw frames, stamps each from the
/// sample count, counts it and hands it to the start gate. The normalizer, the last timestamp and
/// the frame buffer live in a lock of their own, so video from another thread never waits for audio.
final class AudioIntake: @unchecked Sendable {
    private struct State {
        let normalizer: AudioNormalizer
        var last = LastTimestamp()
        /// The frames of the packet being added (reused: no array per packet).
        var frames: [Packet] = []
    }
    private let gate: MuxerStartGate
    private let warnings: MuxerWarningCounter
    private let statistics: Statistics
    private let state: Locked<State>

    init(_ normalizer: AudioNormalizer, gate: MuxerStartGate, warnings: MuxerWarningCounter, statistics: Statistics) throws {
        state = Locked(State(normalizer: normalizer))
        self.gate = gate
        self.warnings = warnings
        self.statistics = statistics
        if normalizer.isReady { gate.setParameters(try normalizer.codecParameters(), of: .audio) }
    }

    /// Normalizes one raw AAC frame or several ADTS frames and queues each.
    func add(_ packet: Packet, pts: Int64, timescale: Int32) throws {
        try state.withLock { s in try add(packet, pts: pts, timescale: timescale, &s) }
    }

    private func add(_ packet: Packet, pts: Int64, timescale: Int32, _ s: inout State) throws {
        let normalizer = s.normalizer
        try gate.checkOpen()
        let wasReady = normalizer.isReady
        let rateBefore = normalizer.sampleRate
        defer { s.frames.removeAll(keepingCapacity: true) }
        do {
            try normalizer.process(packet, into: &s.frames)
        } catch AudioNormalizer.Problem.parametersChanged {
            warnings.drop(.audioParametersChanged)
            return
        } catch is AudioNormalizer.Problem {
            warnings.drop(.unreadableAudio)
            return
        }
        if wasReady && normalizer.sampleRate != rateBefore {
            warnings.drop(.audioParametersChanged)
            return
        }
        if !wasReady, normalizer.isReady { gate.setParameters(try normalizer.codecParameters(), of: .audio) }
        let base = Rational(1, Int32(normalizer.sampleRate))
        let first = Timestamp.rescale(pts, from: Rational(1, timescale), to: base)
        for (i, frame) in s.frames.enumerated() {
            let t = first + Int64(i) * Int64(CodecParameters.aacFrameSamples)
            guard s.last.advance(to: t, in: base) else {
                warnings.drop(.timestampNotIncreasing)
                continue
            }
            frame.pts = t
            frame.dts = t
            frame.duration = Int64(CodecParameters.aacFrameSamples)
            statistics.countPassedThrough(.audio, bytes: frame.size)
            try gate.enqueue(EncodedPacket(stream: .audio, packet: frame, timeBase: base))
        }
    }

    /// Whether audio of this rate and channel count fits the stream; counts one that does not.
    func accepts(sampleRate: Int, channels: Int) -> Bool {
        let same = state.withLock { $0.normalizer.sampleRate == sampleRate && $0.normalizer.channels == channels }
        if !same { warnings.drop(.audioParametersChanged) }
        return same
    }
}
