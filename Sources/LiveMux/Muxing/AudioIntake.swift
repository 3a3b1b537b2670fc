import Foundation
import FFmpeg

/// A `Muxer`'s audio stream on its way in: normalizes AAC into raw frames, stamps each from the
/// sample count, counts it and hands it to the start gate. Locking: `lock` guards the normalizer,
/// `last` and `frames`, so video from another thread never waits for audio.
final class AudioIntake: @unchecked Sendable {
    private let normalizer: AudioNormalizer
    private let gate: MuxerStartGate
    private let warnings: MuxerWarningCounter
    private let statistics: Statistics
    private let lock = NSLock()
    @exclusivity(unchecked) private var last = LastTimestamp()
    /// The frames of the packet being added (reused: no array per packet).
    @exclusivity(unchecked) private var frames: [Packet] = []

    init(_ normalizer: AudioNormalizer, gate: MuxerStartGate, warnings: MuxerWarningCounter, statistics: Statistics) throws {
        self.normalizer = normalizer
        self.gate = gate
        self.warnings = warnings
        self.statistics = statistics
        if normalizer.isReady { gate.setParameters(try normalizer.codecParameters(), of: .audio) }
    }

    /// Normalizes one raw AAC frame or several ADTS frames and queues each.
    func add(_ packet: Packet, pts: Int64, timescale: Int32) throws {
        lock.lock()
        defer { lock.unlock() }
        try gate.checkOpen()
        let wasReady = normalizer.isReady
        let rateBefore = normalizer.sampleRate
        defer { frames.removeAll(keepingCapacity: true) }
        do {
            try normalizer.process(packet, into: &frames)
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
        for (i, frame) in frames.enumerated() {
            let t = first + Int64(i) * 1024
            guard last.advance(to: t, in: base) else {
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
        lock.lock()
        let same = normalizer.sampleRate == sampleRate && normalizer.channels == channels
        lock.unlock()
        if !same { warnings.drop(.audioParametersChanged) }
        return same
    }
}
