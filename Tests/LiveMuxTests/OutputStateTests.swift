import XCTest
@testable import LiveMux

/// What becomes of each output: `writing` until its trailer went out and its sink closed
/// (`finished`) or it stopped (`failed: why`, which a later close does not undo), by name in the
/// order given, as `--stats` says it.
final class OutputStateTests: XCTestCase {
    func testTheOrderGivenAndEachFate() throws {
        let statistics = Statistics()
        statistics.outputsGiven(["a.flv", "stdout", "rtmp://h/app/****"])
        statistics.outputsGiven(["stdout", "collector"])  // a session's own list after the whole one
        statistics.outputStopped("stdout", reason: "stdout was closed by its reader")
        statistics.outputFinished("stdout")
        statistics.outputFinished("a.flv")
        let s = statistics.snapshot
        XCTAssertEqual(s.outputNames, ["a.flv", "stdout", "rtmp://h/app/****", "collector"])
        XCTAssertEqual(s.outputStates, ["a.flv": .finished, "stdout": .failed("stdout was closed by its reader"),
                                        "rtmp://h/app/****": .writing, "collector": .writing])
        let line = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.jsonLine(final: true).utf8)) as? [String: Any])
        XCTAssertEqual(line["output_states"] as? [String: String], [
            "a.flv": "finished", "stdout": "failed: stdout was closed by its reader", "rtmp://h/app/****": "writing", "collector": "writing",
        ])
    }

    /// The first session measures the recording until every output of it stopped; then the next
    /// still writing does, skipping those that stopped before. A later session stopping takes
    /// nothing from the first.
    func testASessionWhoseOutputsAreAllGoneHandsOnTheMeasure() {
        let statistics = Statistics()
        XCTAssertTrue(statistics.measures(0))
        XCTAssertFalse(statistics.measures(1))
        statistics.sessionStopped(1)
        XCTAssertTrue(statistics.measures(0))
        statistics.sessionStopped(0)
        XCTAssertFalse(statistics.measures(0))
        XCTAssertFalse(statistics.measures(1), "it stopped first")
        XCTAssertTrue(statistics.measures(2))
        statistics.sessionStopped(2)
        XCTAssertTrue(statistics.measures(3))
    }
}
