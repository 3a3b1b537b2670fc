import XCTest
@testable import LiveMux

final class LatencyHistogramTests: XCTestCase {
    func testPercentilesWithinHalfABin() {
        var h = LatencyHistogram()
        XCTAssertEqual(h.percentile(0.99), 0, "empty")
        for ms in 1...100 { h.add(Int64(ms) * 1000) }  // 1…100 ms
        XCTAssertEqual(h.count, 100)
        XCTAssertEqual(Double(h.percentile(0.5)), 50_000, accuracy: 100)
        XCTAssertEqual(Double(h.percentile(0.95)), 95_000, accuracy: 100)
        XCTAssertEqual(Double(h.percentile(0.99)), 99_000, accuracy: 5_000)  // 10 ms bins past 100 ms
        XCTAssertEqual(h.percentile(1), 100_000)
        XCTAssertEqual(h.maximum, 100_000)
    }

    func testLongLatenciesAndBoundedMemory() {
        var h = LatencyHistogram()
        for _ in 0..<100_000 { h.add(250) }
        h.add(30_000_000)  // 30 s: past the last bin, reported as the maximum
        XCTAssertEqual(Double(h.percentile(0.5)), 250, accuracy: 50)
        XCTAssertEqual(h.percentile(1), 30_000_000)
        h.add(-5)  // a clock oddity counts as zero
        XCTAssertEqual(h.minimum, 0)
    }
}

final class ClockDriftTests: XCTestCase {
    let frame = 1_000_000.0 / 30

    func testNoDriftNoCorrection() {
        let d = ClockDrift()
        for i in 0..<3000 {
            d.audioObserved(timeline: Int64(i) * 21_333, captured: Int64(i) * 21_333 + Int64(i % 7) * 1000 - 3000)  // ±3 ms jitter
            XCTAssertEqual(d.videoCorrection(frameDuration: frame), 0)
        }
        XCTAssertEqual(d.status.corrections, 0)
    }

    func testFollowsAFastAudioClockInWholeFrames() {
        let d = ClockDrift()
        var correction: Int64 = 0
        // Audio runs 0.5% fast: after 60 s its timeline is 300 ms ahead of the capture clock.
        for i in 0...2812 {
            let captured = Int64(i) * 21_333
            d.audioObserved(timeline: captured + captured / 200, captured: captured)
            let c = d.videoCorrection(frameDuration: frame)
            XCTAssertTrue(c == correction || Double(c - correction) == frame.rounded(), "one frame at a time")
            correction = c
        }
        XCTAssertEqual(d.status.driftMs, 300, accuracy: 5)
        XCTAssertLessThan(abs(d.status.offsetMs), ClockDrift.stepAt * frame / 1000 + 0.1)
        XCTAssertEqual(d.status.corrections, 9)  // 300 ms / 33.3 ms
    }

    /// A device whose audio lands 200 ms off its capture time, with jitter, drifts not at all:
    /// the offset is reported, never followed (the old follower dropped 6 frames for it).
    func testAConstantOffsetIsNoDrift() {
        let d = ClockDrift()
        for i in 0..<3000 {
            let captured = Int64(i) * 21_333
            d.audioObserved(timeline: captured - 200_000 + Int64(i % 7) * 1000, captured: captured)
            XCTAssertEqual(d.videoCorrection(frameDuration: frame), 0)
        }
        XCTAssertEqual(d.status.corrections, 0)
        XCTAssertEqual(d.status.driftPPM, 0, accuracy: 50)
        XCTAssertEqual(d.status.offsetMs, -197, accuracy: 5)
    }

    /// The offset steps by 300 ms mid-recording (a device reopened): a step, not a rate, so no
    /// correction, however long the window holds it; 40 ms more, slowly over 3 s (pulse's stamps
    /// on a loaded machine), neither.
    func testAStepInTheOffsetIsNotFollowed() {
        let d = ClockDrift()
        for i in 0..<3000 {
            let captured = Int64(i) * 21_333
            let ramp = min(40_000, max(0, (i - 2000) * 40_000 / 140))  // 140 reports: 3 s
            d.audioObserved(timeline: captured + (i < 1000 ? 0 : 300_000) + Int64(ramp), captured: captured)
            XCTAssertEqual(d.videoCorrection(frameDuration: frame), 0)
        }
        XCTAssertEqual(d.status.offsetMs, 340, accuracy: 1)
    }

    func testFollowsASlowAudioClockBackwards() {
        let d = ClockDrift()
        for i in 0...2812 {
            let captured = Int64(i) * 21_333
            d.audioObserved(timeline: captured - captured / 200, captured: captured)
            _ = d.videoCorrection(frameDuration: frame)
        }
        XCTAssertLessThan(d.videoCorrection(frameDuration: frame), 0)
        XCTAssertLessThan(abs(d.status.offsetMs), 25.1)
    }
}
