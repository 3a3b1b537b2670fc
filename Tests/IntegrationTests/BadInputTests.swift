import Foundation
import XCTest

/// Bad input: one `error:` line that names the problem and the fix, the documented exit code, a
/// prompt answer, and no half-written file where a good one was expected.
final class BadInputTests: TemporaryDirectoryTestCase {
    func expectRefusal(_ arguments: [String], status: Int32, mentions: String..., file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Tools.livemux(arguments, timeout: 15)
        XCTAssertEqual(r.status, status, "\(arguments): \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.hasPrefix("error: "), "\(arguments): \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)", file: file, line: line)
        for m in mentions {
            XCTAssertTrue(r.stderr.contains(m), "\(arguments): '\(r.stderr)' should mention '\(m)'", file: file, line: line)
        }
        XCTAssertLessThan(r.seconds, 5, "answers promptly", file: file, line: line)
        XCTAssertTrue(r.stdout.isEmpty, "nothing on stdout", file: file, line: line)
    }

    func testUsageErrors() throws {
        let out = "\(dir)/out.asf"
        try expectRefusal(["bogus"], status: 64, mentions: "unknown command")
        try expectRefusal(["record", "--bogus", "-o", out], status: 64, mentions: "--bogus")
        try expectRefusal(["record", "--size", "0x0", "-o", out], status: 64, mentions: "--size")
        try expectRefusal(["record", "--size", "641x480", "-o", out], status: 64, mentions: "even")
        try expectRefusal(["record", "--fps", "0", "-o", out], status: 64, mentions: "--fps")
        try expectRefusal(["record", "-t", "-1", "-o", out], status: 64, mentions: "-t")
        try expectRefusal(["record", "--vbitrate", "abc", "-o", out], status: 64, mentions: "2M")
        try expectRefusal(["record", "-f", "mkv", "-o", out], status: 64, mentions: "asf, flv")
        try expectRefusal(["record", "--vcodec", "vp9", "-o", out], status: 64, mentions: "h264, hevc")
        try expectRefusal(["record", "--vcodec", "hevc", "--flv-hevc", "hvc1", "-o", "\(dir)/x.flv"], status: 64, mentions: "enhanced, codec12")
        try expectRefusal(["mux", "--video", "\(dir)/v.hevc", "--flv-hevc", "12", "-o", "\(dir)/x.flv"], status: 64, mentions: "enhanced, codec12")
        try expectRefusal(["record", "-o", "\(dir)/x.mp4"], status: 64, mentions: "-f asf")
        try expectRefusal(["record", "-f", "asf", "-o", dir], status: 64, mentions: "directory")
        try expectRefusal(["record", "-o", out, "-o", out], status: 64, mentions: "name the same file", "give each -o its own file")
        try expectRefusal(["record"], status: 64, mentions: "-o")
        try expectRefusal(["record", "--sample-rate", "12345", "-o", out], status: 64, mentions: "44100")
        // A source the other option says not to record was ignored without a word (issue 32, item 10).
        try expectRefusal(["record", "--no-video", "--video", "lavfi:testsrc", "-o", out], status: 64, mentions: "--no-video", "--video lavfi:testsrc")
        try expectRefusal(["record", "--no-audio", "--audio", "lavfi:sine", "-o", out], status: 64, mentions: "--no-audio", "--audio lavfi:sine")
        try expectRefusal(["record", "--video", "-", "--audio", "pipe:0", "-o", out], status: 64, mentions: "--input -")
        try expectRefusal(["record", "-o", "file:"], status: 64, mentions: "-o needs a file name")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing written")
    }

    func testRuntimeErrorsBeforeAnythingIsWritten() throws {
        let out = "\(dir)/out.asf"
        // What v4l2 offers instead (no camera here: that it finds none).
        try expectRefusal(["record", "--video", "v4l2:/dev/video9", "-o", out], status: 1, mentions: "/dev/video9", "; v4l2 ")
        let notMedia = "\(dir)/notes.txt"
        try "just text\n".write(toFile: notMedia, atomically: true, encoding: .utf8)
        try expectRefusal(["record", "--input", notMedia, "-o", out], status: 1, mentions: "notes.txt")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "no half-written output")
        try expectRefusal(["record", "-o", "\(dir)/missing/out.asf"], status: 1, mentions: "create the directory")
    }

    func testOutputIsTheInput() throws {
        let existing = "\(dir)/in.asf"
        XCTAssertEqual(try Tools.livemux(["record", "--no-realtime", "-q", "-t", "1", "--size", "160x120", "-o", existing]).status, 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: existing))
        try expectRefusal(["record", "--input", existing, "-o", existing], status: 64, mentions: "input")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: existing)), before, "the input is untouched")
    }

    func testFullDisk() throws {
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "2", "--size", "160x120", "-f", "asf", "-o", "/dev/full"], timeout: 15)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "error: cannot write to /dev/full: the disk is full (free some space or record to another disk)\n")
    }

    func testHelpDescribesEveryOption() throws {
        let r = try Tools.livemux(["record", "--help"])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.stderr, "")
        for option in ["--video", "--audio", "--input", "--video-opt", "--audio-opt", "--no-video", "--no-audio", "--no-realtime",
                       "--vcodec", "--size", "--fps", "--vbitrate", "--gop", "--preset", "--acodec", "--sample-rate",
                       "--channels", "--abitrate", "-o", "-f", "-t", "-q", "-v"] {
            XCTAssertTrue(r.stdoutText.contains("  \(option) "), "help describes \(option)")
        }
        let top = try Tools.livemux(["--help"])
        XCTAssertEqual(top.status, 0)
        XCTAssertTrue(top.stdoutText.contains("record"))
    }
}
