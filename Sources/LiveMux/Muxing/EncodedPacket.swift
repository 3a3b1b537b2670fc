import FFmpeg

/// One encoded packet on its way to the mux thread: the libav packet (pts and dts in `timeBase`)
/// and which stream it belongs to.
struct EncodedPacket: @unchecked Sendable {
    // `packet` is owned by whoever holds this value; it crosses threads only through MuxQueue.
    let stream: StreamKind
    let packet: Packet
    let timeBase: Rational
    /// When the first input that made this packet was captured (monotonic µs); for latency.
    var captureTime: Int64 = 0
    /// The producer's promise about this stream's next packet: its DTS (in `timeBase`) will be at
    /// least this. While the stream's queue is empty, the interleaver may then release another
    /// stream's packet that is earlier than the promise instead of waiting for this stream's next
    /// packet (see `Interleaver.next`). nil promises nothing: the interleaver waits, as it must
    /// for packets from outside (`Muxer`, `FileMuxJob`). Only a producer that stamps its packets
    /// itself can promise: a broken promise could let a later packet out first.
    var nextDTSAtLeast: Int64? = nil
    /// The packet's DTS, read once here: the interleaver compares it several times on another
    /// thread, where each read of the AVPacket would be a cache miss.
    let dts: Int64

    init(stream: StreamKind, packet: Packet, timeBase: Rational, captureTime: Int64 = 0, nextDTSAtLeast: Int64? = nil) {
        self.stream = stream
        self.packet = packet
        self.timeBase = timeBase
        self.captureTime = captureTime
        self.nextDTSAtLeast = nextDTSAtLeast
        dts = packet.dts
    }

    var isKeyframe: Bool { packet.isKeyframe }
}
