import FFmpeg

/// When a packet's bytes really leave the mux thread, for the capture → bytes latency.
///
/// FLV turns each packet into its bytes at once. ASF emits bytes only in whole ASF packets: a media
/// packet's payload sits in the muxer's open ASF packet until later payloads fill it. The muxer
/// flushes in order, so when a write emits bytes, every earlier media packet has left in full;
/// the one just written may still have its tail in the open packet, so it stays pending.
/// Used by the mux thread only.
struct DeliveryLatency {
    let packetized: Bool
    private var pending: [Int64] = []  // capture times (monotonic µs), oldest first

    /// `format` nil: the browsers' MP4, which emits each packet's fragment at once.
    init(format: ContainerFormat?) { packetized = format == .asf }

    /// Whether earlier packets still wait for their bytes (only without it, a packet with no
    /// capture time can be skipped).
    var hasPending: Bool { !pending.isEmpty }

    /// A media packet captured at `captureTime` (0: unknown) was written and `emitted` bytes came
    /// out; returns the latencies (µs) of the packets whose bytes have now left.
    mutating func wrote(captureTime: Int64, emitted: Int, now: Int64) -> [Int64] {
        guard packetized else { return captureTime > 0 ? [now - captureTime] : [] }
        var done: [Int64] = []
        if emitted > 0 {
            done = pending.map { now - $0 }
            pending.removeAll(keepingCapacity: true)
        }
        if captureTime > 0 { pending.append(captureTime) }
        return done
    }

    /// The trailer flushed the open ASF packet: everything still pending has left.
    mutating func flushed(now: Int64) -> [Int64] {
        defer { pending.removeAll() }
        return pending.map { now - $0 }
    }
}
