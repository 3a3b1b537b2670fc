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

    /// --segment-time and --segment-size (issue 28).
    func testDurationsAndByteSizes() throws {
        for (text, seconds) in [("10", 10.0), ("2.5", 2.5), ("90s", 90), ("10m", 600), ("1h", 3600), ("01:30:00", 5400), ("1:30", 90)] {
            XCTAssertEqual(try Values.duration(text, option: "--segment-time"), seconds, text)
        }
        for bad in ["", "0", "-1", "h", "1x", "1:-1", "1:2:3:4", "nan"] {
            XCTAssertThrowsError(try Values.duration(bad, option: "--segment-time"), bad)
        }
        for (text, bytes) in [("1000", Int64(1000)), ("500k", 512_000), ("2M", 2_097_152), ("1G", 1_073_741_824), ("1.5M", 1_572_864)] {
            XCTAssertEqual(try Values.byteSize(text, option: "--segment-size"), bytes, text)
        }
        for bad in ["", "0", "-5M", "M", "abc"] {
            XCTAssertThrowsError(try Values.byteSize(bad, option: "--segment-size"), bad)
        }
    }

    func testSizes() throws {
        XCTAssertTrue(try Values.size("1280x720", option: "--size") == (1280, 720))
        for bad in ["0x0", "1281x720", "x", "640", "10x10", "-2x4"] {
            XCTAssertThrowsError(try Values.size(bad, option: "--size"), bad)
        }
    }

    /// Decimals and fractions are exact rationals; NTSC decimals are N·1000/1001 (issue 18, item 4).
    func testFrameRates() throws {
        let cases: [(String, Int, Int)] = [
            ("30", 30, 1), ("29.97", 30000, 1001), ("30000/1001", 30000, 1001), ("23.976", 24000, 1001),
            ("59.94", 60000, 1001), ("119.88", 120000, 1001), ("29.970", 30000, 1001), ("24000/1001", 24000, 1001),
            ("12.5", 25, 2), ("25.50", 51, 2), ("30.0", 30, 1), ("30.00", 30, 1), ("29.9", 299, 10), ("60/2", 30, 1),
            ("1", 1, 1), ("240", 240, 1), ("7.25", 29, 4),
        ]
        for (text, num, den) in cases {
            let rate = try Values.frameRate(text, option: "--fps")
            XCTAssertEqual(rate, FrameRate(num, den), text)
            XCTAssertEqual(rate.numerator, num, text)
            XCTAssertEqual(rate.denominator, den, text)
        }
        XCTAssertEqual(FrameRate(30000, 1001)?.description, "30000/1001")
        XCTAssertEqual(FrameRate(60, 2)?.description, "30")
        for bad in ["0", "0.5", "241", "240.01", "abc", "", "1/0", "0/1", "-30", "29.97.1", "1e3", "30/", "/2", ".5", "5.", "30 ", "１２",
                    "30000/-1001", "99999999999/1", "29.9700001"] {
            XCTAssertThrowsError(try Values.frameRate(bad, option: "--fps"), bad) { error in
                XCTAssertTrue("\(error)".contains("--fps"), "\(error)")
            }
        }
        let record = try RecordCommand.parse(["--fps", "29.97", "-o", "a.asf"]).configuration
        XCTAssertEqual(record.video.fps, FrameRate(30000, 1001))
        let mux = try MuxCommand.parse(["--video", "v.h264", "--fps", "30000/1001", "-o", "a.asf"]).configuration
        XCTAssertEqual(mux.fps, FrameRate(30000, 1001))
    }

    /// Unset, size, rate, sample rate and channels keep the source's own (issue 18, item 2).
    func testFormatOptionsUnsetByDefault() throws {
        let c = try RecordCommand.parse(["-o", "a.asf"]).configuration
        XCTAssertNil(c.video.width)
        XCTAssertNil(c.video.fps)
        XCTAssertNil(c.audio.sampleRate)
        XCTAssertNil(c.audio.channels)
        let given = try RecordCommand.parse(["--size", "320x240", "--fps", "25", "--sample-rate", "44100", "--channels", "1", "-o", "a.asf"]).configuration
        XCTAssertEqual(given.video.width, 320)
        XCTAssertEqual(given.video.height, 240)
        XCTAssertEqual(given.audio.sampleRate, 44100)
        XCTAssertEqual(given.audio.channels, 1)
    }

    func testRecordOptions() throws {
        let c = try RecordCommand.parse(["--fps", "25", "-o", "a.asf", "-o", "b", "-f", "flv", "-t", "3"]).configuration
        XCTAssertEqual(c.outputs.destinations, [OutputSpec(destination: .file("a.asf"), format: .asf),
                                   OutputSpec(destination: .file("b"), format: .flv)])
        XCTAssertEqual(c.video.fps, FrameRate(25))
        XCTAssertEqual(c.duration, 3)
        XCTAssertThrowsError(try RecordCommand.parse(["--fps", "0", "-o", "a.asf"]))
        XCTAssertThrowsError(try RecordCommand.parse(["-t", "-1", "-o", "a.asf"]))
        XCTAssertThrowsError(try RecordCommand.parse(["-o", "x.mp4"]), "no container from the name")
        XCTAssertThrowsError(try RecordCommand.parse(["--bogus"]))
        XCTAssertEqual(try RecordCommand.parse(["--vcodec", "hevc", "-o", "a.flv"]).configuration.outputs.flvHEVC, .enhanced)
        XCTAssertEqual(try RecordCommand.parse(["--flv-hevc", "codec12", "-o", "a.flv"]).configuration.outputs.flvHEVC, .codec12,
                       "taken with H.264 too, where it changes nothing")
        XCTAssertThrowsError(try RecordCommand.parse(["--flv-hevc", "hvc1", "-o", "a.flv"]))
        XCTAssertEqual(try MuxCommand.parse(["--video", "v.hevc", "--flv-hevc", "codec12", "-o", "a.flv"]).configuration.outputs.flvHEVC, .codec12)
    }

    /// ffmpeg's rule (issue 52, item 7): an encode option before an -o is that output's; before
    /// the first, every output's; after the last, the last one's. Between two -o it is the next
    /// one's only when the one before has its own, else refused; a second for one output is refused.
    func testEncodeOptionsBeforeAnOutputAreThatOutputsAndNeverReadTheOtherWay() throws {
        let c = try RecordCommand.parse(["--vbitrate", "3M", "--abitrate", "96k", "-o", "a.flv", "--vbitrate", "800k", "-b:a", "64k",
                                         "-o", "rtmp://h/live/KEY", "-o", "c.asf", "--size", "854x480", "-r", "15", "--vcodec", "h264"]).configuration
        XCTAssertEqual(c.video.bitRate, 3_000_000)
        XCTAssertEqual(c.audio.bitRate, 96_000)
        XCTAssertTrue(c.outputs.destinations[0].encoding.isEmpty)
        let push = c.outputs.destinations[1].encoding
        XCTAssertEqual([push.videoBitRate, push.audioBitRate, push.width], [800_000, 64_000, nil])
        let last = c.outputs.destinations[2].encoding
        XCTAssertEqual([last.width, last.height, last.videoBitRate], [854, 480, nil])
        XCTAssertEqual(last.fps, FrameRate(15))
        XCTAssertEqual(last.videoCodec, .h264)
        // The example: a.flv got 313 kbit/s and b.flv 835.
        let example = try RecordCommand.parse(["--vbitrate", "800k", "-o", "a.flv", "--vbitrate", "300k", "-o", "b.flv"]).configuration
        XCTAssertEqual(example.video.bitRate, 800_000)
        XCTAssertEqual(example.outputs.destinations.map(\.encoding.videoBitRate), [nil, 300_000])
        XCTAssertEqual(refusal(["-o", "a.flv", "--vbitrate", "300k", "-o", "b.flv"]),
                       "--vbitrate 300k between -o a.flv and -o b.flv could be meant for a.flv or for b.flv:"
                       + " an output's encode options come before its -o, as in ffmpeg. For b.flv give a.flv its own first:"
                       + " --vbitrate RATE -o a.flv --vbitrate 300k -o b.flv; for a.flv write --vbitrate 300k -o a.flv --vbitrate RATE -o b.flv")
        let masked = refusal(["--vbitrate", "1M", "-o", "a.flv", "-o", "rtmp://h/live/KEY", "-s", "640x360", "-o", "c.flv"])
        XCTAssertTrue(masked.hasPrefix("-s 640x360 between -o rtmp://h/live/**** and -o c.flv could be meant for"), masked)
        XCTAssertTrue(masked.contains("… -s WxH -o rtmp://h/live/**** -s 640x360 -o c.flv"), masked)
        for twice in [["--vbitrate", "1M", "--vbitrate", "2M", "-o", "a.flv"], ["-o", "a.flv", "--size", "640x360", "-s", "320x240"],
                      ["-o", "rtmp://h/live/KEY", "-b:v", "1M", "--vbitrate", "2M"],
                      ["--vbitrate", "1M", "-o", "a.flv", "--vbitrate", "2M", "-o", "b.flv", "--vbitrate", "3M"]] {
            let message = refusal(twice)
            XCTAssertTrue(message.contains("given twice") || message.contains("given before it and after"), message)
            XCTAssertFalse(message.contains("KEY"), "the stream key is masked: \(message)")
        }
        for option in [["--gop", "2"], ["--sample-rate", "44100"], ["-ac", "1"], ["--preset", "fast"], ["--no-adaptive-bitrate"]] {
            XCTAssertEqual(refusal(["-o", "rtmp://h/live/KEY"] + option),
                           "\(option[0]) after -o rtmp://h/live/****: \(option[0]) is the job's, every output's, not one output's; give it before the first -o")
        }
        XCTAssertThrowsError(try RecordCommand.parse(["--min-vbitrate", "900k", "-o", "a.flv", "-o", "rtmp://h/live/k", "--vbitrate", "800k"]),
                             "the floor is above the adapting push's bit rate") {
            XCTAssertEqual("\($0)", "--min-vbitrate 900000 is above --vbitrate 800000 of rtmp://h/live/****: give a floor at or below the bit rate")
        }
    }

    func testSourceSpecs() {
        let known: (String) -> Bool = { ["lavfi", "v4l2", "x11grab", "pulse", "alsa"].contains($0) }
        XCTAssertEqual(SourceSpec.parse("x11grab::99.0", isKnownFormat: known), SourceSpec(format: "x11grab", url: ":99.0"))
        XCTAssertEqual(SourceSpec.parse("v4l2:/dev/video0", isKnownFormat: known), SourceSpec(format: "v4l2", url: "/dev/video0"))
        XCTAssertEqual(SourceSpec.parse("clip.mp4", isKnownFormat: known), SourceSpec(format: nil, url: "clip.mp4"))
        XCTAssertEqual(SourceSpec.parse("rtmp://h/app", isKnownFormat: known), SourceSpec(format: nil, url: "rtmp://h/app"))
        XCTAssertEqual(SourceSpec.parse("-", isKnownFormat: known), SourceSpec(format: nil, url: "pipe:0"), "- is stdin, as in ffmpeg")
    }

    /// Issue 32, item 10: stdin as `-`, `file:NAME` and `pipe:1` outputs, and a source the
    /// --no-video/--no-audio beside it would have ignored.
    func testFFmpegSpellingsAndContradictions() throws {
        XCTAssertEqual(try RecordCommand.parse(["--input", "-", "-o", "x.asf"]).configuration.input, SourceSpec(format: nil, url: "pipe:0"))
        XCTAssertEqual(try MuxCommand.parse(["--input", "-", "-o", "x.asf"]).configuration.input, "pipe:0")
        XCTAssertEqual(try MuxCommand.parse(["--video", "-", "--audio", "a.aac", "-o", "x.asf"]).configuration.video, "pipe:0")
        let outputs = try RecordCommand.parse(["-o", "file:foo.flv", "-o", "pipe:1"]).configuration.outputs.destinations
        XCTAssertEqual(outputs, [OutputSpec(destination: .file("foo.flv"), format: .flv), OutputSpec(destination: .standardOutput, format: .asf)])
        for args in [["--no-video", "--video", "lavfi:testsrc"], ["--audio", "lavfi:sine", "--no-audio"],
                     ["--video", "-", "--audio", "-"], ["--video", "pipe:0", "--audio", "pipe:"]] {
            XCTAssertThrowsError(try RecordCommand.parse(args + ["-o", "x.asf"]), "\(args)") { XCTAssertTrue($0 is UsageError, "\($0)") }
        }
        XCTAssertThrowsError(try MuxCommand.parse(["--video", "-", "--audio", "-", "-o", "x.asf"])) { XCTAssertTrue($0 is UsageError) }
        XCTAssertNoThrow(try RecordCommand.parse(["--no-video", "--input", "in.mp4", "-o", "x.asf"]), "--input's audio alone")
    }
}
