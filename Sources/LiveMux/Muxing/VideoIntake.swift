import FFmpeg
import POSIX

/// A `Muxer`'s video stream on its way in: normalizes each access unit, keeps its decoding
/// timestamps increasing, counts it and hands it to the start gate. The normalizer and the last
/// DTS live in a lock of their own, so audio from another thread never waits for video.
final class VideoIntake: @unchecked Sendable {
    private struct State {
        let normalizer: VideoNormalizer
        var last = LastTimestamp()
    }
    /// ASF cannot change its header; FLV writes a new sequence header.
    private let refusesParameterChange: Bool
    private let gate: MuxerStartGate
    private let warnings: MuxerWarningCounter
    private let statistics: Statistics
    private let state: Locked<State>

    init(_ normalizer: VideoNormalizer, formats: Set<ContainerFormat>, gate: MuxerStartGate,
         warnings: MuxerWarningCounter, statistics: Statistics) throws {
        state = Locked(State(normalizer: normalizer))
        refusesParameterChange = formats.contains(.asf)
        self.gate = gate
        self.warnings = warnings
        self.statistics = statistics
        if normalizer.isReady { gate.setParameters(try normalizer.codecParameters(), of: .video) }
    }

    /// Takes parameter sets (Annex B or an avcC/hvcC record) given apart from any picture.
    func addParameterSets(_ bytes: [UInt8]) throws {
        try state.withLock { s in
            let normalizer = s.normalizer
            try gate.checkOpen()
            let wasReady = normalizer.isReady, before = normalizer.extradata
            try normalizer.setParameterSets(bytes)
            if wasReady, before != normalizer.extradata { try checkParameterChange() }
            if !wasReady, normalizer.isReady { try becameReady(normalizer) }
        }
    }

    /// Normalizes and queues one access unit.
    func add(_ packet: Packet, pts: Int64, dts: Int64?, timescale: Int32, isKeyframe: Bool) throws {
        try state.withLock { s in try add(packet, pts: pts, dts: dts, timescale: timescale, isKeyframe: isKeyframe, &s) }
    }

    private func add(_ packet: Packet, pts: Int64, dts: Int64?, timescale: Int32, isKeyframe: Bool, _ s: inout State) throws {
        let normalizer = s.normalizer
        try gate.checkOpen()
        let wasReady = normalizer.isReady
        let out: VideoNormalizer.Output
        do {
            out = try normalizer.process(packet, isKeyframe: isKeyframe)
        } catch let problem as VideoNormalizer.Problem {
            switch problem {
            case .beforeParameterSets: warnings.drop(.videoBeforeParameterSets)
            case .beforeKeyframe: warnings.drop(.videoBeforeKeyframe)
            case .unreadable: warnings.drop(.unreadableVideo)
            }
            return
        }
        if out.changedExtradata != nil && wasReady { try checkParameterChange() }
        let base = Rational(1, timescale)
        let d = dts ?? pts
        guard s.last.advance(to: d, in: base) else {
            warnings.drop(.timestampNotIncreasing)
            return
        }
        out.packet.pts = max(pts, d)
        out.packet.dts = d
        statistics.countPassedThrough(.video, bytes: out.packet.size)
        if !wasReady, normalizer.isReady { try becameReady(normalizer) }
        try gate.enqueue(EncodedPacket(stream: .video, packet: out.packet, timeBase: base))
    }

    private func becameReady(_ normalizer: VideoNormalizer) throws {
        gate.setParameters(try normalizer.codecParameters(), of: .video)
    }

    /// New parameter sets mid-stream: FLV writes a new sequence header, ASF cannot.
    private func checkParameterChange() throws {
        guard refusesParameterChange else { return }
        throw LiveMuxError.unsupported("the video parameter sets changed mid-stream (new SPS/PPS, e.g. a new frame size); ASF cannot change its header: start a new muxer for the new parameters, or use FLV")
    }
}
