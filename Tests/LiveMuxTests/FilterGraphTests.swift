import XCTest
import FFmpeg

/// lavfi sources read through libavfilter directly (FilterGraph), without libavdevice.
final class FilterGraphTests: XCTestCase {
    override func setUp() { FFmpegLog.setLevel(.quiet) }

    func testTwoOutputsComeOutWholeAndInTimeOrder() throws {
        let graph = try FilterGraph(description: "testsrc2=size=64x48:rate=10:duration=2[out0];"
                                    + "sine=sample_rate=8000:samples_per_frame=1000:duration=2[out1]")
        XCTAssertEqual(graph.outputs.map(\.mediaType), [.video, .audio])
        XCTAssertEqual(graph.firstOutput(.audio)?.index, 1)
        XCTAssertEqual(graph.outputs[0].timeBase, Rational(1, 10))
        XCTAssertEqual(graph.outputs[1].timeBase, Rational(1, 8000))
        let frame = try Frame()
        var videoFrames = 0, samples = 0
        var lastMicroseconds: Int64 = .min
        while let index = try graph.read(into: frame) {
            let t = Timestamp.rescale(frame.pts, from: graph.outputs[index].timeBase, to: .microseconds)
            XCTAssertGreaterThanOrEqual(t, lastMicroseconds, "frames must come out in time order across outputs")
            lastMicroseconds = t
            if index == 0 {
                videoFrames += 1
                XCTAssertEqual(frame.width, 64)
            } else {
                samples += frame.sampleCount
            }
        }
        XCTAssertEqual(videoFrames, 20)
        XCTAssertEqual(samples, 16000)
        XCTAssertNil(try graph.read(into: frame), "an ended graph stays ended")
    }

    func testAGraphThatIsNotASourceIsRefused() {
        XCTAssertThrowsError(try FilterGraph(description: "scale=320:240")) { error in
            guard case FilterGraph.Problem.unconnectedInput = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try FilterGraph(description: "nosuchfilter=1")) { error in
            XCTAssertTrue(error is FFmpegError, "\(error)")
        }
    }
}
