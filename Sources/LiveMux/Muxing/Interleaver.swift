import FFmpeg

/// Decides which queued packet is written next: the one with the lowest DTS (compared exactly,
/// across time bases), released only when every other stream has a packet waiting or has ended.
/// Equal DTS go in stream order (video first). Pure logic, no locking: `MuxQueue` adds that.
struct Interleaver {
    private var pending = PerStream<[EncodedPacket]>(repeating: [])
    private var heads = PerStream(repeating: 0)
    private var hasEnded = PerStream(repeating: false)
    let streams: [StreamKind]

    init(streams: [StreamKind]) {
        self.streams = streams.sorted()
    }

    func count(_ stream: StreamKind) -> Int { pending[stream].count - heads[stream] }

    mutating func push(_ packet: EncodedPacket) {
        pending[packet.stream].append(packet)
    }

    mutating func end(_ stream: StreamKind) { hasEnded[stream] = true }

    func ended(_ stream: StreamKind) -> Bool { hasEnded[stream] }

    /// True when every stream has ended and nothing is left.
    var isFinished: Bool { streams.allSatisfy { hasEnded[$0] && count($0) == 0 } }

    /// The next packet in DTS order, or nil when a stream that has not ended has nothing queued
    /// (its next packet could still be earlier). With `force`, decide among what is queued anyway.
    mutating func next(force: Bool = false) -> EncodedPacket? {
        var best: EncodedPacket? = nil
        for s in streams {
            guard count(s) > 0 else {
                if hasEnded[s] || force { continue }
                return nil
            }
            let candidate = pending[s][heads[s]]
            if let b = best, Timestamp.compare(candidate.dts, candidate.timeBase, b.dts, b.timeBase) >= 0 { continue }
            best = candidate
        }
        guard let chosen = best else { return nil }
        take(chosen.stream)
        return chosen
    }

    private mutating func take(_ s: StreamKind) {
        heads[s] += 1
        // Compact now and then, so the array does not grow without bound.
        if heads[s] >= 64, heads[s] * 2 >= pending[s].count {
            pending[s].removeFirst(heads[s])
            heads[s] = 0
        }
    }
}
