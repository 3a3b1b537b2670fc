import Foundation
import XCTest
import FFmpeg
@testable import LiveMux

/// `MuxQueue`: packets out in DTS order, producers held at the capacity, every wait woken by what
/// it waits for or by `cancel()`, batches in and out. A thread is used only where a test is about
/// a wait, and every wait has a deadline.
final class MuxQueueTests: XCTestCase {
    /// How long a wait that should end may take on a loaded machine before the test fails.
    static let deadline = 10.0

    /// A packet with its DTS (and PTS) in milliseconds.
    static func packet(_ stream: StreamKind, _ ms: Int64) -> EncodedPacket {
        let p = try! Packet()
        p.dts = ms
        p.pts = ms
        return EncodedPacket(stream: stream, packet: p, timeBase: .milliseconds)
    }

    static func video(_ ms: Int64...) -> [EncodedPacket] { ms.map { packet(.video, $0) } }
    static func audio(_ ms: Int64...) -> [EncodedPacket] { ms.map { packet(.audio, $0) } }

    static func names(_ packets: [EncodedPacket]) -> [String] {
        packets.map { "\($0.stream == .video ? "v" : "a")\($0.dts)" }
    }

    /// One `pop`, from a test that knows it does not wait.
    func pop(_ queue: MuxQueue) -> (more: Bool, packets: [String]) {
        var batch: [EncodedPacket] = []
        let more = queue.pop(into: &batch)
        return (more, Self.names(batch))
    }

    /// What a `push` or `pop` made on a thread of its own returned; read once the thread finished.
    final class Outcome: @unchecked Sendable {
        var accepted = false
        var batch: [EncodedPacket] = []
        var packets: [String] { MuxQueueTests.names(batch) }
    }

    func pushOnAThread(_ queue: MuxQueue, _ packet: EncodedPacket) -> (WatchedThread, Outcome) {
        let outcome = Outcome()
        return (WatchedThread("producer") { outcome.accepted = queue.push(packet) }, outcome)
    }

    func pushOnAThread(_ queue: MuxQueue, contentsOf packets: [EncodedPacket]) -> (WatchedThread, Outcome) {
        let outcome = Outcome()
        return (WatchedThread("producer") { outcome.accepted = queue.push(contentsOf: packets) }, outcome)
    }

    func popOnAThread(_ queue: MuxQueue) -> (WatchedThread, Outcome) {
        let outcome = Outcome()
        return (WatchedThread("consumer") { outcome.accepted = queue.pop(into: &outcome.batch) }, outcome)
    }

    func testPopsInDTSOrderAndEndsOnceEveryStreamEndedAndDrained() {
        let q = MuxQueue(streams: [.video, .audio], capacity: 8, singleProducer: false)
        for p in Self.video(0, 33) + Self.audio(0, 21, 42) { XCTAssertTrue(q.push(p)) }
        // a42 stays: the next video packet could still come before it.
        XCTAssertEqual(pop(q).packets, ["v0", "a0", "a21", "v33"], "in DTS order; on equal DTS video first")
        XCTAssertEqual(q.depths, [.video: 0, .audio: 1])
        q.end(.video)
        XCTAssertEqual(pop(q).packets, ["a42"], "once video ended, audio goes alone")
        q.end(.audio)
        XCTAssertFalse(pop(q).more, "every stream ended and drained")
    }

    /// The end of the stream a waiting consumer needs wakes it.
    func testEndWakesAWaitingConsumer() {
        let q = MuxQueue(streams: [.video, .audio], capacity: 8, singleProducer: false)
        q.push(Self.packet(.video, 0))
        let (consumer, popped) = popOnAThread(q)
        XCTAssertTrue(consumer.blocks(), "audio could still come first: the consumer waits")
        q.end(.audio)
        XCTAssertTrue(consumer.finishes(within: Self.deadline))
        XCTAssertTrue(popped.accepted)
        XCTAssertEqual(popped.packets, ["v0"])
    }

    /// A producer waits while its stream holds `capacity` packets, and goes on once the consumer
    /// took some; the queue never holds more.
    func testPushWaitsWhileItsStreamIsFull() {
        let q = MuxQueue(streams: [.video, .audio], capacity: 2, singleProducer: false)
        for p in Self.video(0, 33) { XCTAssertTrue(q.push(p)) }
        let (producer, pushed) = pushOnAThread(q, Self.packet(.video, 66))
        XCTAssertTrue(producer.blocks(), "video is full: the push waits")
        XCTAssertEqual(q.depths[.video], 2)
        q.push(Self.packet(.audio, 0))
        XCTAssertEqual(pop(q).packets, ["v0", "a0"], "v33 waits for the next audio packet")
        XCTAssertTrue(producer.finishes(within: Self.deadline), "room again: the producer goes on")
        XCTAssertTrue(pushed.accepted)
        XCTAssertEqual(q.depths[.video], 2)
    }

    /// `cancel()` wakes a producer waiting on a full queue and a consumer waiting for packets;
    /// both, and every push after, say the queue is gone.
    func testCancelWakesAWaitingProducerAndTheConsumer() {
        let q = MuxQueue(streams: [.video, .audio], capacity: 1, singleProducer: false)
        q.push(Self.packet(.video, 0))
        let (producer, pushed) = pushOnAThread(q, Self.packet(.video, 33))
        let (consumer, popped) = popOnAThread(q)
        XCTAssertTrue(producer.blocks())
        XCTAssertTrue(consumer.blocks())
        q.cancel()
        XCTAssertTrue(producer.finishes(within: Self.deadline), "cancel wakes the producer")
        XCTAssertTrue(consumer.finishes(within: Self.deadline), "cancel wakes the consumer")
        XCTAssertFalse(pushed.accepted)
        XCTAssertFalse(popped.accepted)
        XCTAssertEqual(popped.packets, [])
        XCTAssertFalse(q.push(Self.packet(.audio, 0)))
        XCTAssertFalse(q.push(contentsOf: Self.audio(0, 21)))
    }

    /// One thread producing both streams (a badly interleaved file) would wait forever for the
    /// other stream while its own is full: the full queue is released instead. With a thread per
    /// stream the same state waits, since the other thread will bring what is missing.
    func testOneProducerForBothStreamsReleasesAFullQueue() {
        let single = MuxQueue(streams: [.video, .audio], capacity: 2, singleProducer: true)
        for p in Self.video(0, 33) { single.push(p) }
        XCTAssertEqual(pop(single).packets, ["v0"], "released without audio: one packet, back under the capacity")

        let apart = MuxQueue(streams: [.video, .audio], capacity: 2, singleProducer: false)
        for p in Self.video(0, 33) { apart.push(p) }
        let (consumer, popped) = popOnAThread(apart)
        XCTAssertTrue(consumer.blocks(), "a thread per stream: wait for audio")
        apart.push(Self.packet(.audio, 10))
        XCTAssertTrue(consumer.finishes(within: Self.deadline))
        XCTAssertEqual(popped.packets, ["v0", "a10"])
    }

    /// A batch goes in whole, past the capacity (every packet can take part in the next decision),
    /// and the producer then waits until the queues are below the capacity.
    func testABatchGoesInWholeThenWaitsForRoom() {
        let q = MuxQueue(streams: [.video, .audio], capacity: 2, singleProducer: true, wakeBatch: 4)
        let (producer, pushed) = pushOnAThread(q, contentsOf: Self.video(0, 33, 66, 100, 133))
        XCTAssertTrue(producer.blocks(), "past the capacity: the producer waits")
        XCTAssertEqual(q.depths[.video], 5, "the whole batch is queued")
        q.end(.audio)
        XCTAssertEqual(pop(q).packets, ["v0", "v33", "v66", "v100", "v133"], "one pop takes every packet that can go")
        XCTAssertTrue(producer.finishes(within: Self.deadline), "drained: the producer goes on")
        XCTAssertTrue(pushed.accepted)
    }

    /// With `wakeBatch` 4 (a producer reading a file) a waiting consumer is woken once 4 packets
    /// came, not for each; with 1 (live) for the first.
    func testAWaitingConsumerIsWokenOncePerBatch() {
        let batched = MuxQueue(streams: [.video], capacity: 64, singleProducer: true, wakeBatch: 4)
        let (consumer, popped) = popOnAThread(batched)
        XCTAssertTrue(consumer.blocks())
        for p in Self.video(0, 33, 66) {
            batched.push(p)
            XCTAssertFalse(consumer.finishes(within: 0.1), "woken before the batch was complete")
        }
        batched.push(Self.packet(.video, 100))
        XCTAssertTrue(consumer.finishes(within: Self.deadline))
        XCTAssertEqual(popped.packets, ["v0", "v33", "v66", "v100"])

        let live = MuxQueue(streams: [.video], capacity: 64, singleProducer: true)
        let (liveConsumer, livePopped) = popOnAThread(live)
        XCTAssertTrue(liveConsumer.blocks())
        live.push(Self.packet(.video, 0))
        XCTAssertTrue(liveConsumer.finishes(within: Self.deadline), "live: woken for the first packet")
        XCTAssertEqual(livePopped.packets, ["v0"])
    }
}
