import XCTest
@testable import LiveMux

/// What becomes of each output: `writing` until its trailer went out and its sink closed
/// (`finished`) or it stopped (`failed: why`, which a later close does not undo), by id in the
/// order given, as `--stats` says it.
final class OutputStateTests: XCTestCase {
    func testTheOrderGivenAndEachFate() throws {
        let statistics = Statistics()
        statistics.outputsGiven([("o0", "a.flv"), ("o1", "stdout"), ("o2", "rtmp://h/app/****")])
        statistics.outputsGiven([("o1", "stdout"), ("collector", "collector")])  // a session's own list after the whole one
        statistics.outputStopped("o1", reason: "stdout was closed by its reader")
        statistics.outputFinished("o1")
        statistics.outputFinished("o0")
        let s = statistics.snapshot
        XCTAssertEqual(s.outputKeys, ["o0", "o1", "o2", "collector"])
        XCTAssertEqual(s.outputStates, ["o0": .finished, "o1": .failed("stdout was closed by its reader"),
                                        "o2": .writing, "collector": .writing])
        let line = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.jsonLine(final: true).utf8)) as? [String: Any])
        XCTAssertEqual(line["output_states"] as? [String: String], [
            "a.flv": "finished", "stdout": "failed: stdout was closed by its reader", "rtmp://h/app/****": "writing", "collector": "writing",
        ])
    }

    /// Two pushes to one service with two keys have one label (the key masked) and stay two
    /// outputs (issue 49, item 1): each its own state and bytes, by id in `outputs`, and told
    /// apart by their ids where `output_states` and `output_bytes` list them by name.
    func testTwoOutputsWithOneLabelStayTwo() throws {
        let statistics = Statistics()
        statistics.outputsGiven([("o0", "rtmp://h/live/****"), ("o1", "rtmp://h/live/****"), ("o2", "a.flv")])
        statistics.outputWrote("o0", bytes: 1000)
        statistics.outputWrote("o1", bytes: 7)
        statistics.outputFinished("o1")
        let s = statistics.snapshot
        XCTAssertEqual(s.outputBytes, ["o0": 1000, "o1": 7])
        let line = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.jsonLine().utf8)) as? [String: Any])
        XCTAssertEqual(line["output_states"] as? [String: String],
                       ["rtmp://h/live/**** (o0)": "writing", "rtmp://h/live/**** (o1)": "finished", "a.flv": "writing"])
        XCTAssertEqual(line["output_bytes"] as? [String: Int], ["rtmp://h/live/**** (o0)": 1000, "rtmp://h/live/**** (o1)": 7])
        let outputs = try XCTUnwrap(line["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { "\($0["id"]!) \($0["name"]!) \($0["state"]!) \($0["bytes"]!)" },
                       ["o0 rtmp://h/live/**** writing 1000", "o1 rtmp://h/live/**** finished 7", "o2 a.flv writing 0"])
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
