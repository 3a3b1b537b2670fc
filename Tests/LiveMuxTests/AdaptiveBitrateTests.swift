import XCTest
import FFmpeg
@testable import LiveMux

/// The pieces of issue 16 that are pure logic: the link monitor, the bit-rate controller and the
/// output queue's latency skip.
final class AdaptiveBitrateUnitTests: XCTestCase {
    typealias Status = LinkMonitor.Status

    func testBacklogIsTheAgeOfTheOldestUnacknowledgedMediaByte() {
        var m = LinkMonitor()
        m.willWrite(bytes: 100, captureTime: 0)  // header
        m.didWrite(video: false)
        m.willWrite(bytes: 1000, captureTime: 1_000_000)
        m.didWrite(video: true)
        m.willWrite(bytes: 1000, captureTime: 1_100_000)
        m.didWrite(video: true)
        // The kernel still holds 1500 of the 2100 bytes: the first media chunk is not through.
        var s = m.sample(at: 1_500_000, queue: .init(unacknowledged: 1500, acknowledged: 600), oldestQueued: nil)
        XCTAssertEqual(s.backlogMs, 500, accuracy: 0.1)
        s = m.sample(at: 1_600_000, queue: .init(unacknowledged: 500, acknowledged: 1600), oldestQueued: nil)
        XCTAssertEqual(s.backlogMs, 500, accuracy: 0.1, "the second chunk, captured at 1.1 s")
        s = m.sample(at: 1_700_000, queue: .init(unacknowledged: 0, acknowledged: 2100), oldestQueued: 1_650_000)
        XCTAssertEqual(s.backlogMs, 50, accuracy: 0.1, "all through: the oldest chunk still queued")
        s = m.sample(at: 1_800_000, queue: .init(unacknowledged: 0, acknowledged: 2100), oldestQueued: nil)
        XCTAssertEqual(s.backlogMs, 0)
    }

    func testLinkRateIsMeasuredOnlyWhileTheKernelHoldsBytes() {
        var m = LinkMonitor()
        var acked: Int64 = 0
        m.willWrite(bytes: 1_000_000, captureTime: 1)
        m.didWrite(video: true)
        // Busy: 12 500 bytes acknowledged every 100 ms (1 Mbit/s) with 50 kB still held.
        var s = Status()
        for i in 0...20 {
            s = m.sample(at: Int64(i) * 100_000, queue: .init(unacknowledged: 1_000_000 - acked, acknowledged: acked), oldestQueued: nil)
            acked += 12_500
        }
        XCTAssertEqual(try XCTUnwrap(s.capacityBps), 1_000_000, accuracy: 1000)
        // Idle (nothing held): a later window says nothing about capacity.
        var idle = LinkMonitor()
        for i in 0...40 { s = idle.sample(at: Int64(i) * 100_000, queue: .init(unacknowledged: 0, acknowledged: 0), oldestQueued: nil) }
        XCTAssertNil(s.capacityBps)
    }

    func testStepsDownAtOnceAndClimbsBackSlowly() {
        var c = BitrateController(maximum: 2_000_000, minimum: 500_000)
        var t: Int64 = 0
        let congested = Status(backlogMs: 600, capacityBps: 1_000_000, throughputBps: 1_000_000, otherBps: 130_000)
        let down = c.update(at: t, congested)
        XCTAssertLessThan(down, 1_000_000, "to what the link carries, at once")
        XCTAssertGreaterThanOrEqual(down, 500_000, "never below the floor")
        // Calm on a 1 Mbit/s link: climbs, but only to what the link carries.
        let calm = Status(backlogMs: 20, capacityBps: 1_000_000, throughputBps: 800_000, otherBps: 130_000)
        for _ in 0..<80 { t += 250_000; _ = c.update(at: t, calm) }
        XCTAssertLessThanOrEqual(c.target, 1_000_000 * 85 / 100 - 130_000 + 1)
        // The link opens (no busy samples): up one step a second, back to the maximum.
        let open = Status(backlogMs: 0, capacityBps: nil, throughputBps: 900_000, otherBps: 130_000)
        var seconds = 0.0
        while c.target < 2_000_000 && seconds < 30 { t += 250_000; seconds += 0.25; _ = c.update(at: t, open) }
        XCTAssertEqual(c.target, 2_000_000)
        XCTAssertGreaterThan(seconds, 3, "slowly: one step a second")
        XCTAssertLessThan(seconds, 12)
    }

    func testSkipToTheNewestKeyframeKeepsAudio() {
        func media(_ s: StreamKind, _ dts: Int64, key: Bool = false) -> Chunk {
            Chunk(kind: .media(stream: s, dts: dts, isKeyframe: key), bytes: [1], captureTime: dts + 1)
        }
        var q = OutputQueue(limit: 100)
        for c in [media(.video, 0, key: true), media(.audio, 1), media(.video, 33), media(.audio, 40),
                  media(.video, 66, key: true), media(.audio, 70), media(.video, 99)] { _ = q.push(c) }
        XCTAssertTrue(q.canSkip)
        XCTAssertEqual(q.oldestCaptureTime, 1)
        XCTAssertEqual(q.skipToNewestKeyframe(), 2, "the two video chunks before the newest keyframe")
        var kinds: [Chunk.Kind] = []
        while let c = q.pop() { kinds.append(c.kind) }
        XCTAssertEqual(kinds, [.media(stream: .audio, dts: 1, isKeyframe: false), .media(stream: .audio, dts: 40, isKeyframe: false),
                               .media(stream: .video, dts: 66, isKeyframe: true), .media(stream: .audio, dts: 70, isKeyframe: false),
                               .media(stream: .video, dts: 99, isKeyframe: false)])
        // No keyframe queued: video is skipped until the next one, audio still goes.
        _ = q.push(media(.video, 132))
        _ = q.push(media(.audio, 140))
        XCTAssertEqual(q.skipToNewestKeyframe(), 1)
        XCTAssertFalse(q.canSkip)
        XCTAssertEqual(q.push(media(.video, 165)), .dropped)
        XCTAssertEqual(q.push(media(.video, 198, key: true)), .queued)
    }
}
