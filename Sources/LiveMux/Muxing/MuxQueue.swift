import Foundation

/// The bounded queues between the encoders and the mux thread, one per stream, with the
/// interleaver deciding what comes out.
///
/// Locking: every field is guarded by `condition`. Producers wait while their stream's queue is
/// full; the consumer waits while the interleaver cannot decide. `cancel()` wakes everyone.
final class MuxQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var interleaver: Interleaver
    private var cancelled = false
    private let capacity: Int
    /// Whether one thread produces every stream (one input carrying both).
    private let singleProducer: Bool

    init(streams: [StreamKind], capacity: Int, singleProducer: Bool, startAtZero: Bool = false) {
        interleaver = Interleaver(streams: streams, startAtZero: startAtZero)
        self.capacity = max(1, capacity)
        self.singleProducer = singleProducer
    }

    /// Queues a packet, waiting while its stream's queue is full. False once cancelled.
    @discardableResult
    func push(_ packet: EncodedPacket) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && interleaver.count(packet.stream) >= capacity {
            condition.wait()
        }
        if cancelled { return false }
        interleaver.push(packet)
        condition.broadcast()
        return true
    }

    /// No more packets will come for this stream.
    func end(_ stream: StreamKind) {
        condition.lock()
        interleaver.end(stream)
        condition.broadcast()
        condition.unlock()
    }

    /// The next packet in DTS order; nil when every stream has ended and drained, or on cancel.
    ///
    /// When one thread produces both streams and one stream's queue is full while the other, not
    /// ended, has nothing queued, waiting would deadlock that thread (a badly interleaved file), so
    /// the queued packets are released anyway; the mux thread drops any that would then go
    /// backwards. With a thread per stream, the producer that is ahead simply waits.
    func pop() -> EncodedPacket? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if cancelled { return nil }
            if let p = interleaver.next() {
                condition.broadcast()
                return p
            }
            if interleaver.isFinished { return nil }
            if singleProducer, interleaver.streams.contains(where: { interleaver.count($0) >= capacity }),
               let p = interleaver.next(force: true) {
                condition.broadcast()
                return p
            }
            condition.wait()
        }
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
