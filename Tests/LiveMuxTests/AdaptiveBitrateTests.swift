import XCTest
import FFmpeg
@testable import LiveMux

/// The pieces of issues 16 and 31 that are pure logic: the link monitor, the bit-rate controller
/// (alone and on a `SimulatedLink`) and the output queue's latency skip.
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

    /// Statuses of a 1 Mbit/s link carrying 130 kbit/s of audio and container: a queue standing, one
    /// draining (its floor between calm and standing), one forming under a probe, and calm; the
    /// video a step down aims at (less its drain), and a probe's.
    static let congested = Status(backlogMs: 600, backlogFloorMs: 300, backlogQuickFloorMs: 500, capacityBps: 1_000_000, deliveredBps: 1_000_000,
                                  recentBps: 1_000_000, otherBps: 130_000)
    static let draining = Status(backlogMs: 300, backlogFloorMs: 120, backlogQuickFloorMs: 200, capacityBps: 1_000_000, deliveredBps: 1_000_000,
                                 recentBps: 1_000_000, otherBps: 130_000)
    static let forming = Status(backlogMs: 150, backlogFloorMs: 60, backlogQuickFloorMs: 120, capacityBps: 1_000_000, deliveredBps: 1_000_000,
                                recentBps: 1_000_000, otherBps: 130_000)
    static let calm = Status(backlogMs: 20, backlogFloorMs: 10, backlogQuickFloorMs: 10, capacityBps: nil, deliveredBps: 800_000, recentBps: 800_000,
                             otherBps: 130_000)
    static let hold = Int(1_000_000 * BitrateController.holdShare) - 130_000, probe = 1_250_000 - 130_000

    func testStepsDownAtOnceAndRemembersTheCeiling() {
        var c = BitrateController(maximum: 5_000_000, minimum: 300_000)
        var t: Int64 = 0
        func run(_ seconds: Double, _ s: Status) { for _ in 0..<Int(seconds * 4) { t += 250_000; _ = c.update(at: t, s) } }
        let (hold, probe) = (Self.hold, Self.probe)
        XCTAssertEqual(c.update(at: t, Self.congested), hold - 150_000, "to what the link carries less a 4 s drain, at once")
        XCTAssertEqual(c.ceiling, 1_000_000)
        // Drained, then calm for a second: back to the hold under the ceiling in one step, then,
        // a second later, a probe a quarter over it.
        run(1, Self.draining)
        run(1.25, Self.calm)
        XCTAssertEqual(c.target, hold)
        run(0.75, Self.calm)
        XCTAssertEqual(c.target, hold)
        run(0.25, Self.calm)
        XCTAssertEqual(c.target, probe)
        // A queue forming ends the probe (the quick floor over 100 ms, when a hold would wait
        // for 150 ms over a whole second): under the hold, and the ceiling stays.
        run(2, Self.calm)
        run(0.25, Self.forming)
        XCTAssertEqual(c.target, hold - 37_500)
        XCTAssertEqual(c.ceiling, 1_000_000)
        // The link opens: back to the hold, then the next probe holds for half a second longer
        // than the last took to fail (2.5 s at least), the ceiling goes, and the rate climbs in
        // steps that double: twice the probe's step over the hold, then four times, to the maximum.
        var seconds = 0.0, targets: [Int] = []
        while c.target < 5_000_000 && seconds < 30 {
            run(0.25, Self.calm)
            seconds += 0.25
            if targets.last != c.target { targets.append(c.target) }
        }
        XCTAssertNil(c.ceiling)
        let step = probe - hold
        XCTAssertEqual(targets, [hold - 37_500, hold, probe, probe + 2 * step, probe + 6 * step, 5_000_000])
        XCTAssertLessThan(seconds, 10)
    }

    /// A queue that clears at once after a step down says the link opened (the link it was
    /// measured on drains it over seconds): the ceiling goes, and the climb starts from the probe's level.
    func testAQueueThatClearsAtOnceSetsTheCeilingAside() {
        var c = BitrateController(maximum: 4_000_000, minimum: 500_000)
        var t: Int64 = 0
        func run(_ seconds: Double, _ s: Status) { for _ in 0..<Int(seconds * 4) { t += 250_000; _ = c.update(at: t, s) } }
        _ = c.update(at: t, Self.congested)
        run(0.5, Self.calm)
        XCTAssertNil(c.ceiling)
        XCTAssertEqual(c.target, Self.probe)
        run(1.5, Self.calm)
        XCTAssertEqual(c.target, Self.probe + 2 * (Self.probe - Self.hold))
        // Drained over a second instead: the ceiling stays.
        var d = BitrateController(maximum: 4_000_000, minimum: 500_000)
        _ = d.update(at: 0, Self.congested)
        for i in 1...4 { _ = d.update(at: Int64(i) * 250_000, Self.draining) }
        for i in 5...8 { _ = d.update(at: Int64(i) * 250_000, Self.calm) }
        XCTAssertEqual(d.ceiling, 1_000_000)
        XCTAssertLessThan(d.target, Self.hold)
    }

    /// A bursty link lets the backlog dip under calm while it carries less than is sent: a probe
    /// holds only when the link carried nine tenths of what was sent over the last second.
    func testAProbeHoldsOnlyWhenTheLinkCarriedWhatWasSent() {
        var c = BitrateController(maximum: 2_000_000, minimum: 500_000)
        var t: Int64 = 0
        func run(_ seconds: Double, _ s: Status) { for _ in 0..<Int(seconds * 4) { t += 250_000; _ = c.update(at: t, s) } }
        run(0.25, Self.congested)
        run(1, Self.draining)
        var short = Self.calm
        short.recentSentBps = 1_250_000
        short.recentBps = 1_000_000
        run(12, short)
        XCTAssertEqual(c.ceiling, 1_000_000)
        XCTAssertEqual(c.target, Self.probe)
        var carried = short
        carried.recentBps = 1_200_000
        run(0.25, carried)
        XCTAssertNil(c.ceiling)
    }

    /// A probe that held on a path that only hid it: congestion right after, on a link no faster
    /// than the probe, brings the ceiling back and makes the next probe twice as long.
    func testAProbeThePathHidBringsTheCeilingBack() {
        var c = BitrateController(maximum: 2_000_000, minimum: 500_000)
        var t: Int64 = 0
        func run(_ seconds: Double, _ s: Status) { for _ in 0..<Int(seconds * 4) { t += 250_000; _ = c.update(at: t, s) } }
        run(0.25, Self.congested)
        run(1, Self.draining)
        run(12, Self.calm)
        XCTAssertNil(c.ceiling, "the first probe (6 s) held")
        XCTAssertGreaterThan(c.target, 1_500_000)
        // A burst the path absorbed reads 1.02 Mbit/s over the last second: the old ceiling is lower.
        var jammed = Self.congested
        jammed.capacityBps = nil
        jammed.recentBps = 1_020_000
        run(0.25, jammed)
        XCTAssertEqual(c.ceiling, 1_000_000)
        // The next probe is still unheld after 6 s (12 s now).
        run(1, Self.draining)
        run(14, Self.calm)
        XCTAssertEqual(c.ceiling, 1_000_000)
        XCTAssertEqual(c.target, Self.probe)
    }

    /// Issue 41's paths, simulated: the 32 KiB bucket (issue 31's case: the old controller
    /// climbed back to --vbitrate and fell again every 15 s), a 64 KiB bucket, and a link that
    /// steps 2 → 1 → 0.5 → 2 Mbit/s through small buffers. On each the squeeze holds within the
    /// bounds and the target is back over 80% of --vbitrate within 8 s of the link opening,
    /// wherever in a probe's cycle it opens. Behind the 64 KiB bucket the first queue shows only
    /// once 1.6 s of backlog stands, which the floor (500k) drains at 0.37 s a second: its span
    /// starts at 13 s; and a probe there sits over the link about 4 s (docs/latency.md: the
    /// 3 s issue 41 asks is not met).
    /// Issue 52, item 4: an encoder that sends less than its target (simple content) makes a probe
    /// go over no link: it teaches nothing, the target stays within 125% of what was sent (it
    /// climbed to 1.85 Mbit/s on a 1 Mbit/s link while x264 sent 0.87), and when the content turns
    /// busy the backlog stays within 500 ms.
    /// Seconds after the content turns busy in which its backlog is read.
    static let busyWindow = 8.0

    func testAnEncoderUnderItsTargetTeachesNothingOfTheLink() {
        let busyAt = 40.0
        // From 8 s, after the squeeze was measured; and from the start (a flat picture), when the
        // link never showed a queue: the target sat at the maximum until the first busy frame.
        for (simple, from) in [(500_000.0, 8.0), (750_000.0, 8), (870_000.0, 8), (20_000.0, 0)] {
            var link = SimulatedLink(rate: { $0 < 5 ? 10_000_000 : 1_000_000 })
            link.encoderMaximum = { $0 >= from && $0 < busyAt ? simple : nil }
            let minimum = 300_000
            var c = BitrateController(maximum: 2_000_000, minimum: minimum)
            let points = link.run(seconds: busyAt + 20, controller: &c)
            let calm = points.filter { $0.time >= 15 && $0.time < busyAt }
            let highest = calm.map(\.target).max() ?? 0
            // Within a quarter over what was sent (not under the floor), or at the hold under the link measured (1 Mbit/s).
            let hold = from > 5 ? 1_000_000 * BitrateController.holdShare - link.otherBps : 0
            let bound = max(hold, Double(minimum), simple * BitrateController.underfilledRise)
            XCTAssertLessThanOrEqual(Double(highest), bound + 1, "\(simple) from \(from) s: targets \(calm.map(\.target))")
            // The turn to busy content, before the next probe (whose own queue is issue 41's).
            let busy = points.filter { $0.time >= busyAt && $0.time < busyAt + Self.busyWindow }
            let backlog = busy.map(\.status.backlogMs).max() ?? .infinity
            XCTAssertLessThanOrEqual(backlog, 500, "\(simple): backlog/target once busy: \(busy.map { "\(Int($0.status.backlogMs))/\($0.target / 1000)" })")
            print("adaptive, encoder under its target: sending at most \(Int(simple)), the target at most \(highest); once busy the backlog at most \(Int(backlog)) ms")
        }
    }

    func testSettlesOnASlowBurstyLinkInsteadOfPumping() {
        for burst: Int64 in [32 * 1024, 64 * 1024] {
            for opening in stride(from: 30.0, to: 38.0, by: 0.5) {
                let link = SimulatedLink(rate: { $0 < 5 || $0 >= opening ? 10_000_000 : 1_000_000 }, burst: burst)
                var c = BitrateController(maximum: 2_000_000, minimum: 500_000)
                let points = link.run(seconds: opening + 12, controller: &c)
                let name = "\(burst / 1024) KiB bucket, open at \(opening) s"
                Self.check(points, from: burst > 32 * 1024 ? 13 : 11, to: opening, link: 1_000_000, name)
                Self.checkRecovery(points, after: opening, to: 1_600_000, within: 8, name)
                Self.checkNeverOverLong(points, from: 5, to: opening, link: 1_000_000, longest: burst > 32 * 1024 ? 5 : 3, name)
            }
        }
    }

    func testFollowsALinkThatStepsDownAndBack() {
        for opening in stride(from: 40.0, to: 48.0, by: 0.5) {
            let link = SimulatedLink(rate: { $0 < 5 ? 2_000_000 : $0 < 20 ? 1_000_000 : $0 < opening ? 500_000 : 2_000_000 }, burst: 1500)
            var c = BitrateController(maximum: 1_500_000, minimum: 200_000)
            let points = link.run(seconds: opening + 12, controller: &c)
            let name = "steps, open at \(opening) s"
            Self.check(points, from: 11, to: 20, link: 1_000_000, name)
            Self.check(points, from: 28, to: opening, link: 500_000, name)
            Self.checkRecovery(points, after: opening, to: 1_200_000, within: 8, name)
        }
    }

    /// Issue 41's hold bound from `from` to `to` (s): the target averaged over every 10 s window
    /// (or the whole span, when shorter) within 50–95% of `link`, the backlog under 500 ms except
    /// within 2 s after a step down (a probe cut).
    static func check(_ points: [SimulatedLink.Point], from: Double, to: Double, link: Double, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        let trace = stride(from: 0, to: points.count, by: 4).map { points[$0] }
            .map { "\(Int($0.time)):\($0.target / 1000)/\(Int(($0.ceiling ?? 0) / 1000))/\(Int($0.status.linkBps / 1000))/\(Int($0.status.backlogMs))" }.joined(separator: " ")
        let span = points.filter { $0.time >= from && $0.time < to }
        let window = min(10, to - from)
        var averages: [Double] = []
        for start in stride(from: from, through: to - window, by: 0.25) {
            let inside = span.filter { $0.time >= start && $0.time < start + window }.map { Double($0.target) }
            if !inside.isEmpty { averages.append(inside.reduce(0, +) / Double(inside.count)) }
        }
        let cuts = zip(points, points.dropFirst()).filter { $1.target < $0.target }.map { $1.time }
        let backlogs = span.filter { p in !cuts.contains { p.time >= $0 && p.time < $0 + 2 } }.map(\.status.backlogMs)
        print("simulated \(name): \(Int(from))–\(Int(to)) s: 10 s averages \(Int(averages.min() ?? 0))–\(Int(averages.max() ?? 0)), backlog max \(Int(backlogs.max() ?? 0)) ms")
        XCTAssertGreaterThanOrEqual(averages.min() ?? 0, 0.5 * link, "\(name): \(trace)", file: file, line: line)
        XCTAssertLessThanOrEqual(averages.max() ?? .infinity, 0.95 * link, "\(name): \(trace)", file: file, line: line)
        XCTAssertLessThan(backlogs.max() ?? .infinity, 500, "\(name): \(trace)", file: file, line: line)
    }

    /// Back over `level` within `within` seconds after `after`.
    static func checkRecovery(_ points: [SimulatedLink.Point], after: Double, to level: Int, within: Double, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        let back = points.first { $0.time >= after && $0.target >= level }?.time
        print("simulated \(name): over \(level / 1000) kbit/s \(back.map { String(format: "%.2f", $0 - after) } ?? "never") s after the link opened")
        XCTAssertLessThanOrEqual(back ?? .infinity, after + within, name, file: file, line: line)
    }

    /// The target never over `link` for more than `longest` s in a row from `from` to `to`.
    static func checkNeverOverLong(_ points: [SimulatedLink.Point], from: Double, to: Double, link: Double, longest limit: Double,
                                   _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        var longest = 0.0, since: Double?
        for p in points where p.time >= from && p.time < to {
            if Double(p.target) > link { since = since ?? p.time; longest = max(longest, p.time - since!) } else { since = nil }
        }
        print("simulated \(name): over the link at most \(longest) s in a row")
        XCTAssertLessThanOrEqual(longest, limit, name, file: file, line: line)
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
