import XCTest
@testable import LiveMuxCLI
@testable import LiveMux

/// The progress line names each output that failed while the others go on, numbered from 1 in
/// the order given; outputs writing or finished are not named.
final class ProgressLineTests: XCTestCase {
    func testFailedOutputsAreNamedByTheirPlace() {
        var s = StatisticsSnapshot()
        s.outputNames = ["a.flv", "fifo", "rtmp://h/app/****"]
        s.outputStates = ["a.flv": .finished, "fifo": .failed("fifo was closed by its reader"), "rtmp://h/app/****": .writing]
        XCTAssertTrue(ProgressLine.format(s).hasSuffix(" latency99=0ms out2=failed"), ProgressLine.format(s))
        XCTAssertTrue(ProgressLine.formatRemux(s).hasSuffix(" dropped=0 out2=failed"), ProgressLine.formatRemux(s))
        s.outputStates["fifo"] = .writing
        XCTAssertFalse(ProgressLine.format(s).contains("out"), ProgressLine.format(s))
    }
}
