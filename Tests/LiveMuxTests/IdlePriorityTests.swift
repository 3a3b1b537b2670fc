import XCTest
@testable import LiveMux

/// When the watchdog calls an idle-priority thread starved, from two samples of the kernel's
/// counters 200 ms apart (the healthy figures are the extremes seen beside x264 at 720p).
final class IdlePriorityTests: XCTestCase {
    typealias Sample = IdlePriority.Sample
    let window: Int64 = 200_000_000

    func testFillingGapsBesideTheEncoderIsHealthy() {
        let start = Sample(ran: 0, waited: 0, runnable: true)
        XCTAssertFalse(Sample(ran: 26_000_000, waited: 156_000_000, runnable: true).starved(since: start, elapsed: window))
        XCTAssertFalse(Sample(ran: 1_000_000, waited: 2_000_000, runnable: false).starved(since: start, elapsed: window))
    }

    func testWaitingForACoreThroughTheWindowIsStarving() {
        let start = Sample(ran: 5_000_000, waited: 1_000_000, runnable: true)
        // The delay is counted when the thread finally runs, so it can exceed the window.
        XCTAssertTrue(Sample(ran: 5_100_000, waited: 215_000_000, runnable: false).starved(since: start, elapsed: window))
        XCTAssertTrue(Sample(ran: 5_500_000, waited: 196_000_000, runnable: true).starved(since: start, elapsed: window))
    }

    func testRunnableYetNotRunningIsStarving() {
        let start = Sample(ran: 5_000_000, waited: 1_000_000, runnable: true)
        XCTAssertTrue(Sample(ran: 5_000_000, waited: 1_000_000, runnable: true).starved(since: start, elapsed: window))
        // Blocked on a queue (not runnable) at either end: not starving, however little it ran.
        XCTAssertFalse(Sample(ran: 5_000_000, waited: 1_000_000, runnable: false).starved(since: start, elapsed: window))
        let blocked = Sample(ran: 5_000_000, waited: 1_000_000, runnable: false)
        XCTAssertFalse(Sample(ran: 5_000_000, waited: 1_000_000, runnable: true).starved(since: blocked, elapsed: window))
    }

    func testShareOfTheWindowRun() {
        let start = Sample(ran: 5_000_000, waited: 0, runnable: true)
        XCTAssertEqual(Sample(ran: 125_000_000, waited: 0, runnable: true).ranShare(since: start, elapsed: window), 0.6, accuracy: 1e-9)
    }
}
