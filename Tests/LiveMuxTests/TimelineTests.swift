import XCTest
@testable import LiveMux

/// The timeline starts only once every expected input has delivered a frame (issue 32, item 4).
final class TimelineTests: XCTestCase {
    func testWithoutExpectedInputsEveryFrameGoesOn() {
        let t = Timeline(videoSetsBase: true, separateThreads: true)
        XCTAssertTrue(t.admits(.video, at: 0))
        XCTAssertTrue(t.admits(.audio, at: 0))
    }

    /// A screen that delivers from 1.0 s and a microphone whose first sample is at 1.5 s: the
    /// video frames before 1.5 s cannot start the timeline; audio always goes on (its encoder
    /// trims what comes before zero).
    func testVideoWaitsForTheLatestFirstFrame() {
        let t = Timeline(videoSetsBase: true, separateThreads: true)
        t.expectInput()
        t.expectInput()
        t.inputStarted(at: 1_000_000)
        XCTAssertFalse(t.admits(.video, at: 1_000_000), "the microphone has not delivered yet")
        XCTAssertFalse(t.admits(.video, at: 1_600_000), "nor now")
        XCTAssertTrue(t.admits(.audio, at: 1_000_000))
        t.inputStarted(at: 1_500_000)
        XCTAssertFalse(t.admits(.video, at: 1_466_667), "before the microphone's first sample")
        XCTAssertTrue(t.admits(.video, at: 1_500_000))
        XCTAssertTrue(t.admits(.video, at: 1_533_333), "open from then on")
    }

    /// Without video, audio sets zero and is the stream held back.
    func testAudioWaitsWhenItSetsTheBase() {
        let t = Timeline(videoSetsBase: false)
        t.expectInput()
        XCTAssertFalse(t.admits(.audio, at: 0))
        t.inputStarted(at: 10)
        XCTAssertFalse(t.admits(.audio, at: 5))
        XCTAssertTrue(t.admits(.audio, at: 10))
    }
}
