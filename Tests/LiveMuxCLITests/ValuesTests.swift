import XCTest
@testable import LiveMuxCLI
import LiveMux

final class ValuesTests: XCTestCase {
    func testBitRates() throws {
        XCTAssertEqual(try Values.bitRate("2M", option: "-b"), 2_000_000)
        XCTAssertEqual(try Values.bitRate("800k", option: "-b"), 800_000)
        XCTAssertEqual(try Values.bitRate("128000", option: "-b"), 128_000)
        XCTAssertEqual(try Values.bitRate("1.5M", option: "-b"), 1_500_000)
        for bad in ["abc", "", "-1M", "0", "12", "nanM"] {
            XCTAssertThrowsError(try Values.bitRate(bad, option: "--vbitrate"), bad)
        }
    }

    func testSizes() throws {
        XCTAssertTrue(try Values.size("1280x720", option: "--size") == (1280, 720))
        for bad in ["0x0", "1281x720", "x", "640", "10x10", "-2x4"] {
            XCTAssertThrowsError(try Values.size(bad, option: "--size"), bad)
        }
    }

    func testRecordOptions() throws {
        let c = try RecordCommand.parse(["-o", "a.asf", "-o", "b", "-f", "flv", "--fps", "25", "-t", "3"]).configuration
        XCTAssertEqual(c.outputs, [OutputSpec(destination: .file("a.asf"), format: .asf),
                                   OutputSpec(destination: .file("b"), format: .flv)])
        XCTAssertEqual(c.video.fps, 25)
        XCTAssertEqual(c.duration, 3)
        XCTAssertThrowsError(try RecordCommand.parse(["--fps", "0", "-o", "a.asf"]))
        XCTAssertThrowsError(try RecordCommand.parse(["-t", "-1", "-o", "a.asf"]))
        XCTAssertThrowsError(try RecordCommand.parse(["-o", "x.mp4"]), "no container from the name")
        XCTAssertThrowsError(try RecordCommand.parse(["--bogus"]))
        XCTAssertEqual(try RecordCommand.parse(["--vcodec", "hevc", "-o", "a.flv"]).configuration.flvHEVC, .enhanced)
        XCTAssertEqual(try RecordCommand.parse(["--flv-hevc", "codec12", "-o", "a.flv"]).configuration.flvHEVC, .codec12,
                       "taken with H.264 too, where it changes nothing")
        XCTAssertThrowsError(try RecordCommand.parse(["--flv-hevc", "hvc1", "-o", "a.flv"]))
        XCTAssertEqual(try MuxCommand.parse(["--video", "v.hevc", "--flv-hevc", "codec12", "-o", "a.flv"]).configuration.flvHEVC, .codec12)
    }

    func testSourceSpecs() {
        let known: (String) -> Bool = { ["lavfi", "v4l2", "x11grab", "pulse", "alsa"].contains($0) }
        XCTAssertEqual(SourceSpec.parse("x11grab::99.0", isKnownFormat: known), SourceSpec(format: "x11grab", url: ":99.0"))
        XCTAssertEqual(SourceSpec.parse("v4l2:/dev/video0", isKnownFormat: known), SourceSpec(format: "v4l2", url: "/dev/video0"))
        XCTAssertEqual(SourceSpec.parse("clip.mp4", isKnownFormat: known), SourceSpec(format: nil, url: "clip.mp4"))
        XCTAssertEqual(SourceSpec.parse("rtmp://h/app", isKnownFormat: known), SourceSpec(format: nil, url: "rtmp://h/app"))
    }
}
