import Foundation

/// The bounded queues between the encoders and the mux thread, one per stream, with the
/// interleaver deciding what comes out.
///
/// Locking: every field is guarded by `condition`. Producers wait while their stream's queue is
/// full; the consumer waits while the interleaver cannot decide. `cancel()` wakes everyone.
///
/// Wake-ups: live producers wake the consumer for every packet (latency). A producer that reads
/// a file as fast as it can (`wakeBatch` > 1) pushes batches and wakes the consumer only once that
/// many packets came; a producer waiting on a full queue is woken once every queue has drained to
/// `lowWater`, or when the consumer has nothing left. A sleep and a wake-up per packet (two system
/// calls and two context switches) cost more than muxing the packet.
final class MuxQueue: @unchecked Sendable {
    private let condition = NSCondition()
    // `@exclusivity(unchecked)`: fields of the per-packet path, used by one thread (or under a
    // lock) with no overlapping access; see "Exclusivity" in docs/architecture.md.
    @exclusivity(unchecked) private var interleaver: Interleaver
    @exclusivity(unchecked) private var cancelled = false
    private let capacity: Int
    /// Whether one thread produces every stream (one input carrying both).
    private let singleProducer: Bool
    private let wakeBatch: Int
    /// Waiting producers are woken once every queue is down to this.
    private let lowWater: Int
    @exclusivity(unchecked) private var consumerWaiting = false
    /// Packets pushed since the consumer began to wait.
    @exclusivity(unchecked) private var pushedWhileWaiting = 0
    @exclusivity(unchecked) private var producersWaiting = 0

    init(streams: [StreamKind], capacity: Int, singleProducer: Bool, wakeBatch: Int = 1, startAtZero: Bool = false) {
        interleaver = Interleaver(streams: streams, startAtZero: startAtZero)
        self.capacity = max(1, capacity)
        self.singleProducer = singleProducer
        self.wakeBatch = max(1, wakeBatch)
        lowWater = self.capacity - min(self.wakeBatch, max(1, self.capacity / 2))
    }

    /// Queues a packet, waiting while its stream's queue is full. False once cancelled.
    @discardableResult
    func push(_ packet: consuming EncodedPacket) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && interleaver.count(packet.stream) >= capacity {
            producersWaiting += 1
            condition.wait()
            producersWaiting -= 1
        }
        if cancelled { return false }
        let stream = packet.stream
        interleaver.push(packet)
        if consumerWaiting {
            pushedWhileWaiting += 1
            if pushedWhileWaiting >= wakeBatch || interleaver.count(stream) >= capacity { condition.broadcast() }
        }
        return true
    }

    /// Queues several packets under one lock (a producer reading a file), then waits while a
    /// stream's queue is full, unless `waitingForRoom` is false (a muxer's packets that waited for
    /// the streams' parameters: the one that completed them may be the only one that can make
    /// room, on this very thread). The queues may go past their capacity by the batch; waiting only
    /// afterwards means no packet is held back from an interleaving decision. False once cancelled.
    @discardableResult
    func push(contentsOf packets: [EncodedPacket], waitingForRoom: Bool = true) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if cancelled { return false }
        for p in packets { interleaver.push(p) }
        if consumerWaiting {
            pushedWhileWaiting += packets.count
            if pushedWhileWaiting >= wakeBatch || interleaver.anyCount(atLeast: capacity) { condition.broadcast() }
        }
        while waitingForRoom && !cancelled && interleaver.anyCount(atLeast: capacity) {
            producersWaiting += 1
            condition.wait()
            producersWaiting -= 1
        }
        return !cancelled
    }

    /// No more packets will come for this stream.
    func end(_ stream: StreamKind) {
        condition.lock()
        interleaver.end(stream)
        condition.broadcast()
        condition.unlock()
    }

    /// Moves every packet that can go now into `batch`, in DTS order, waiting until at least one
    /// can; false when every stream has ended and drained, or on cancel. (One lock round per batch,
    /// not per packet.)
    ///
    /// When one thread produces both streams and one stream's queue is full while the other, not
    /// ended, has nothing queued, waiting would deadlock that thread (a badly interleaved file), so
    /// the queued packets are released anyway; the mux thread drops any that would then go
    /// backwards. With a thread per stream, the producer that is ahead simply waits.
    func pop(into batch: inout [EncodedPacket]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if cancelled { return false }
            if let first = interleaver.next() ?? forcedRelease() {
                batch.append(first)
                while let p = interleaver.next() { batch.append(p) }
                if producersWaiting > 0 && interleaver.everyCount(atMost: lowWater) {
                    condition.broadcast()
                }
                return true
            }
            if interleaver.isFinished { return false }
            // Nothing can go without more input: a producer waiting on a full queue must run.
            if producersWaiting > 0 { condition.broadcast() }
            consumerWaiting = true
            pushedWhileWaiting = 0
            condition.wait()
            consumerWaiting = false
        }
    }

    /// With one producer for every stream, a full queue while another stream has nothing is
    /// released anyway (see `pop`).
    private func forcedRelease() -> EncodedPacket? {
        guard singleProducer, interleaver.anyCount(atLeast: capacity) else { return nil }
        return interleaver.next(force: true)
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    var depths: [StreamKind: Int] {
        condition.lock()
        defer { condition.unlock() }
        var d: [StreamKind: Int] = [:]
        for s in interleaver.streams { d[s] = interleaver.count(s) }
        return d
    }
}
