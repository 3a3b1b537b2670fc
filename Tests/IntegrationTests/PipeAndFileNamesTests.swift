import Foundation
import XCTest

/// Inputs and outputs named as ffmpeg names them (issue 32, item 10): `-` and `pipe:0` read stdin,
/// `file:NAME` is the file NAME (with the usual exists/-y rule on NAME), `pipe:1` is stdout.
final class PipeAndFileNamesTests: TemporaryDirectoryTestCase {
    /// 1 s of 160x120 H.264 + AAC in FLV, made by livemux.
    func source() throws -> String {
        let path = "\(dir)/in.flv"
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "1", "--size", "160x120", "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return path
    }

    /// The command, through a real pipe: `cat in.flv | livemux record --input - -o out.asf`.
    func testRecordReadsStandardInput() throws {
        let input = try source(), out = "\(dir)/out.asf"
        let r = try Tools.run("bash", ["-c", "cat \"$1\" | \"$2\" record -q --no-realtime --input - -o \"$3\"", "bash", input, Tools.livemux, out],
                              timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try Tools.probe(out)
        XCTAssertEqual(p.format.format_name, "asf")
        XCTAssertEqual(p.stream("video")?.width, 160)
        XCTAssertEqual(Double(try XCTUnwrap(p.stream("video")).packetCount), 30, accuracy: 1, "every frame of the 1 s input")
        XCTAssertNotNil(p.stream("audio"))
        XCTAssertEqual(try Tools.decodeErrors(out), "")
    }

    func testMuxReadsStandardInput() throws {
        let input = try source()
        for (name, spelling) in [("dash.asf", "-"), ("pipe.asf", "pipe:0")] {
            let out = "\(dir)/\(name)"
            let r = try Tools.livemux(["mux", "-q", "--input", spelling, "-o", out], stdinFrom: input, timeout: 30)
            XCTAssertEqual(r.status, 0, "\(spelling): \(r.stderr)")
            let p = try Tools.probe(out)
            XCTAssertEqual(try XCTUnwrap(p.stream("video"), spelling).packetCount, 30, spelling)
            XCTAssertEqual(p.stream("audio")?.codec_name, "aac", spelling)
            XCTAssertEqual(try Tools.decodeErrors(out), "", spelling)
        }
        // Elementary video on stdin: its timing info cannot be read ahead, and the warning says so.
        let h264 = "\(dir)/v.h264"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "1",
                                            "-c:v", "libx264", "-bf", "0", h264])
        XCTAssertEqual(made.status, 0, made.stderr)
        let guessed = try Tools.livemux(["mux", "--video", "-", "-o", "\(dir)/guessed.flv"], stdinFrom: h264, timeout: 30)
        XCTAssertEqual(guessed.status, 0, guessed.stderr)
        XCTAssertTrue(guessed.stderr.contains("warning: elementary video on stdin: timing it at 25 fps"), guessed.stderr)
        let given = try Tools.livemux(["mux", "-q", "--video", "-", "--fps", "30", "-o", "\(dir)/given.flv"], stdinFrom: h264, timeout: 30)
        XCTAssertEqual(given.status, 0, given.stderr)
        XCTAssertEqual(try Tools.probe("\(dir)/given.flv").stream("video")?.packetCount, 30)
    }

    /// `-o file:NAME` wrote a file named `file:NAME`.
    func testFileProtocolPrefixNamesTheFile() throws {
        let out = "\(dir)/f.flv"
        let args = ["record", "-q", "--no-realtime", "-t", "0.3", "--size", "160x120", "-o", "file:\(out)"]
        let r = try Tools.livemux(args)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.probe(out).format.format_name, "flv")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["f.flv"], "no file named file:…")
        let before = FileManager.default.contents(atPath: out)
        let again = try Tools.livemux(args)
        XCTAssertEqual(again.status, 64)
        XCTAssertEqual(again.stderr, "error: \(out) exists (add -y to overwrite)\n", "the rule applies to the real path")
        XCTAssertEqual(FileManager.default.contents(atPath: out), before)
        XCTAssertEqual(try Tools.livemux(["record", "-y"] + args.dropFirst()).status, 0)
        // pipe:1 is stdout, as in ffmpeg (run in the test's directory, where a file pipe:1 would appear).
        let p = try Tools.run("bash", ["-c", "cd \"$1\" && \"$2\" record -q --no-realtime -t 0.3 --size 160x120 -o pipe:1 -f flv > piped",
                                       "bash", dir, Tools.livemux])
        XCTAssertEqual(p.status, 0, p.stderr)
        XCTAssertEqual(try Tools.probe("\(dir)/piped").format.format_name, "flv")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/pipe:1"))
    }
}
