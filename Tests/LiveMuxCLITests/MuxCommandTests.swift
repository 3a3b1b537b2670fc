import XCTest
@testable import LiveMuxCLI
import LiveMux

final class MuxCommandTests: XCTestCase {
    func testOptions() throws {
        let c = try MuxCommand.parse(["--video", "v.h264", "--audio", "a.aac", "--fps", "30", "-o", "out.flv", "-q"])
        XCTAssertEqual(c.configuration.video, "v.h264")
        XCTAssertEqual(c.configuration.audio, "a.aac")
        XCTAssertEqual(c.configuration.fps, FrameRate(30))
        XCTAssertEqual(c.configuration.outputs.destinations.first?.format, .flv, "from the file name")
        XCTAssertEqual(c.configuration.outputs.destinations.map(\.destination), [.file("out.flv")])
        XCTAssertTrue(c.quiet)
        let pipe = try MuxCommand.parse(["--input", "in.mp4", "-o", "-"])
        XCTAssertEqual(pipe.configuration.outputs.destinations.map(\.destination), [.standardOutput])
        XCTAssertEqual(pipe.configuration.outputs.destinations.first?.format, .asf, "stdout defaults to ASF")
        XCTAssertEqual(try MuxCommand.parse(["--input", "in.mp4", "-f", "flv", "-o", "x"]).configuration.outputs.destinations.first?.format, .flv)
    }

    /// Every destination record takes; a URL or --listen is paced unless told otherwise.
    func testOutputsAsInRecord() throws {
        let c = try MuxCommand.parse(["--input", "in.mp4", "-o", "a.asf", "-o", "rtmp://h/app/k", "-o", "-", "-f", "flv"]).configuration
        XCTAssertEqual(c.outputs.destinations.map(\.destination), [.file("a.asf"), .network("rtmp://h/app/k"), .standardOutput])
        XCTAssertEqual(c.outputs.destinations.map(\.format), [.asf, .flv, .flv])
        XCTAssertTrue(c.realtime, "a URL output is paced")
        XCTAssertFalse(try MuxCommand.parse(["--input", "in.mp4", "-o", "a.asf"]).configuration.realtime)
        XCTAssertFalse(try MuxCommand.parse(["--input", "in.mp4", "--no-realtime", "-o", "rtmp://h/app/k"]).configuration.realtime)
        XCTAssertTrue(try MuxCommand.parse(["--input", "in.mp4", "--realtime", "-o", "a.asf"]).configuration.realtime)
        let served = try MuxCommand.parse(["--input", "in.mp4", "--listen", "127.0.0.1:0"]).configuration
        XCTAssertEqual(served.outputs.listen, ListenAddress(port: 0))
        XCTAssertTrue(served.realtime)
    }

    func testUsageErrors() {
        let bad: [[String]] = [
            ["-o", "x.asf"],                                          // no input
            ["--input", "a.mp4", "--video", "v.h264", "-o", "x.asf"], // both kinds of input
            ["--video", "v.h264"],                                    // no output
            ["--video", "v.h264", "-o", "x"],                         // container unknown
            ["--video", "v.h264", "-o", "a.asf", "-o", "a.asf"],      // one file twice
            ["--video", "v.h264", "-f", "asf", "-o", "rtmp://h/app/k"], // RTMP carries FLV
            ["--video", "v.h264", "--fps", "0", "-o", "a.asf"],
            ["--video", "v.h264", "-f", "mp4", "-o", "a.asf"],
            ["--video", "v.h264", "--size", "10x10", "-o", "a.asf"],  // a record option
        ]
        for args in bad {
            XCTAssertThrowsError(try MuxCommand.parse(args), args.joined(separator: " ")) { error in
                XCTAssertTrue(error is UsageError, "\(error)")
            }
        }
    }
}
