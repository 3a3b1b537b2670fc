import FFmpeg

/// One audio encode of the placed samples (a bit rate some outputs asked for) and the mux
/// sessions its packets go to (`PacketTee`). Every lane gets the same whole frames, stamped from
/// the running sample count. Used by the audio encoder's capture thread only.
final class AudioLane {
    private let encoder: Encoder
    let tee: PacketTee
    private let statistics: Statistics
    /// Samples per encoded frame.
    let frameSize: Int

    init(settings: AudioSettings, format: AudioFormat, tee: PacketTee, statistics: Statistics) throws {
        var s = Encoder.Settings(codecName: settings.codec.encoderName, bitRate: settings.bitRate,
                                 timeBase: Rational(1, Int32(format.sampleRate)))
        s.sampleRate = format.sampleRate
        s.channels = format.channels
        s.sampleFormat = .floatPlanar
        encoder = try Encoder(s)
        frameSize = encoder.frameSize > 0 ? encoder.frameSize : CodecParameters.aacFrameSamples
        self.tee = tee
        self.statistics = statistics
    }

    func streamDescription() throws -> ContainerWriter.StreamDescription {
        .init(kind: .audio, parameters: try encoder.parameters(), timeBase: encoder.timeBase)
    }

    /// Encodes one frame (nil: flush) and queues what the encoder has ready. `promising`: every
    /// frame sent so far was a whole `frameSize` frame, stamped from the sample count, so the
    /// packets are contiguous and the next one starts `frameSize` samples after this one; the mux
    /// queue may rely on that (`EncodedPacket.nextDTSAtLeast`). A packet that leaves only while
    /// flushing promises nothing: the last frame may be short. `captured`: when the samples at a
    /// timeline sample index were captured. False once no session takes packets.
    func encode(_ frame: Frame?, promising: Bool, captured: (Int64) -> Int64) throws -> Bool {
        try encoder.send(frame)
        while case .value(let packet) = try encoder.receive() {
            // The encoder's priming packet lies before the start of the timeline: never negative.
            if packet.pts < 0 { continue }
            if packet.duration <= 0 { packet.duration = Int64(frameSize) }
            if tee.measures { statistics.countEncoded(.audio, bytes: packet.size) }
            let next = promising ? packet.dts + Int64(frameSize) : nil
            if try !tee.push(packet, stream: .audio, timeBase: encoder.timeBase, captureTime: captured(packet.pts), nextDTSAtLeast: next) {
                return false
            }
        }
        return true
    }

    /// Ends the stream in every session (after the flush).
    func end() { tee.end(.audio) }
}
