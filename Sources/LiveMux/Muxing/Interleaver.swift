import FFmpeg

/// Decides which queued packet is written next: the one with the lowest DTS (compared exactly,
/// across time bases), released only when no packet still to come can go before it. Equal DTS go
/// in stream order (video first). Pure logic, no locking: `MuxQueue` adds that.
///
/// A stream whose queue is empty and that has not ended could still send an earlier packet, so
/// the others wait for it — unless its last packet came with a promise (`nextDTSAtLeast`): its
/// next packet is then known to sort no earlier than that DTS, and a packet of another stream that
/// sorts before it is released at once. This never reorders anything; it only stops waiting for a
/// packet that cannot come first (an AAC packet waiting for the next video frame to be encoded, or
/// a video frame waiting for the AAC packet that follows it).
struct Interleaver {
    /// Taken packets at the front of a stream's array before it is compacted.
    static let compactionThreshold = 64
    /// Each stream's packets; the ones before `heads` were taken (moved out: no reference counts).
    private var pending = PerStream<[EncodedPacket?]>(repeating: [])
    private var heads = PerStream(repeating: 0)
    private var hasEnded = PerStream(repeating: false)
    /// The promise that came with each stream's last packet pushed (DTS in its time base).
    private var nextAtLeast = PerStream<(dts: Int64, timeBase: Rational)?>(repeating: nil)
    /// Packets whose DTS was below the promise their stream made before them (a producer bug; a
    /// packet released on that promise may then be later than this one). Tests check it stays 0.
    private(set) var brokenPromises = 0
    /// Debug builds stop at a broken promise; the test of the count turns that off.
    var stopsAtBrokenPromise = true
    let streams: [StreamKind]

    /// - Parameter startAtZero: every stream's first DTS is 0 or later (the pipeline's shared
    ///   timeline has no negative times), so a first packet at 0 need not wait for the others'.
    init(streams: [StreamKind], startAtZero: Bool = false) {
        self.streams = streams.sorted()
        if startAtZero {
            for s in self.streams { nextAtLeast[s] = (0, Rational(1, 1)) }
        }
    }

    func count(_ stream: StreamKind) -> Int { pending[stream].count - heads[stream] }

    // Loops, not closures: a closure that captures `self` copies the whole interleaver.

    /// Whether some stream has `limit` packets queued or more.
    func anyCount(atLeast limit: Int) -> Bool {
        for s in streams where count(s) >= limit { return true }
        return false
    }

    /// Whether every stream has `limit` packets queued or fewer.
    func everyCount(atMost limit: Int) -> Bool { !anyCount(atLeast: limit + 1) }

    mutating func push(_ packet: consuming EncodedPacket) {
        if let promise = nextAtLeast[packet.stream],
           Timestamp.compare(packet.dts, packet.timeBase, promise.dts, promise.timeBase) < 0 {
            brokenPromises += 1
            if stopsAtBrokenPromise {
                assertionFailure("\(packet.stream) packet DTS \(packet.dts) is below the \(promise.dts) its stream promised")
            }
        }
        nextAtLeast[packet.stream] = packet.nextDTSAtLeast.map { ($0, packet.timeBase) }
        let stream = packet.stream
        pending[stream].append(packet)
    }

    mutating func end(_ stream: StreamKind) { hasEnded[stream] = true }

    /// True when every stream has ended and nothing is left.
    var isFinished: Bool {
        for s in streams where !hasEnded[s] || count(s) > 0 { return false }
        return true
    }

    /// The next packet in DTS order, or nil when a stream that has not ended has nothing queued
    /// and its next packet could still come first (no promise, or a promise at or before the best
    /// queued packet). With `force`, decide among what is queued anyway.
    mutating func next(force: Bool = false) -> EncodedPacket? {
        // The earliest of: each stream's head, or, for an empty stream, the earliest its next
        // packet can be. Streams are sorted, so on equal DTS the earlier stream keeps its place.
        var best: (stream: StreamKind, dts: Int64, timeBase: Rational, queued: Bool)? = nil
        for s in streams {
            let dts: Int64, timeBase: Rational, queued: Bool
            if count(s) > 0 {
                let head = pending[s][heads[s]]!
                (dts, timeBase, queued) = (head.dts, head.timeBase, true)
            } else if hasEnded[s] || force {
                continue
            } else if let promise = nextAtLeast[s] {
                (dts, timeBase, queued) = (promise.dts, promise.timeBase, false)
            } else {
                return nil
            }
            if let b = best, Timestamp.compare(dts, timeBase, b.dts, b.timeBase) >= 0 { continue }
            best = (s, dts, timeBase, queued)
        }
        // A promise first: that stream's next packet may still be the one to go.
        guard let chosen = best, chosen.queued else { return nil }
        let packet = pending[chosen.stream][heads[chosen.stream]].take()
        take(chosen.stream)
        return packet
    }

    private mutating func take(_ s: StreamKind) {
        heads[s] += 1
        // Compact now and then, so the array does not grow without bound.
        if heads[s] >= Self.compactionThreshold, heads[s] * 2 >= pending[s].count {
            pending[s].removeFirst(heads[s])
            heads[s] = 0
        }
    }
}
