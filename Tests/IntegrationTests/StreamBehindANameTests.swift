import Foundation
import XCTest

/// A pipe, FIFO or character device named as a file (`/dev/stdout`, `/proc/self/fd/1`, a FIFO,
/// `file:FIFO`) is a stream, as `-` is (issue 38): written by the streaming muxer, which never
/// seeks back, so the run ends with exit 0 and what the reader got plays clean. It said
/// `error: Illegal seek` and exited 1 after writing the whole stream.
final class StreamBehindANameTests: TemporaryDirectoryTestCase {
    /// What livemux writes into a pipe, saved and read back by ffprobe and ffmpeg.
    func assertClean(_ path: String, _ format: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let p = try Tools.probe(path)
        XCTAssertEqual(p.format.format_name, format, what, file: file, line: line)
        XCTAssertEqual(Double(try XCTUnwrap(p.stream("video"), what).packetCount), 30, accuracy: 1, what, file: file, line: line)
        XCTAssertEqual(p.stream("audio")?.codec_name, "aac", what, file: file, line: line)
        XCTAssertEqual(try Tools.decodeErrors(path), "", what, file: file, line: line)
    }

    /// stdout is a pipe here (`Tools.run` reads it), named two ways other than `-`.
    func testStandardOutputByItsNames() throws {
        for (name, format) in [("/dev/stdout", "flv"), ("/proc/self/fd/1", "asf")] {
            let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "1", "--size", "160x120", "-o", name, "-f", format], timeout: 30)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            XCTAssertEqual(r.stderr, "", name)
            let saved = "\(dir)/\(format).out"
            try r.stdout.write(to: URL(fileURLWithPath: saved))
            try assertClean(saved, format, name)
        }
    }

    /// The issue's command: `livemux record -t 2 -o /dev/stdout -f flv | cat > x.flv`.
    func testTheIssuesPipeline() throws {
        let out = "\(dir)/x.flv"
        let r = try Tools.run("bash", ["-c", "\"$1\" record -q -t 1 --size 160x120 -o /dev/stdout -f flv | cat > \"$2\"; exit ${PIPESTATUS[0]}",
                                       "bash", Tools.livemux, out], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        try assertClean(out, "flv", "/dev/stdout into cat")
    }

    /// A FIFO made with mkfifo, by its name and as `file:NAME`, each read by `cat` into a file.
    func testNamedPipe() throws {
        for (spelling, format) in [("", "flv"), ("file:", "asf")] {
            let fifo = "\(dir)/live-\(format).fifo", saved = "\(dir)/got.\(format)"
            XCTAssertEqual(mkfifo(fifo, 0o644), 0, String(cString: strerror(errno)))
            let r = try Tools.run("bash", ["-c", "cat \"$2\" > \"$3\" & \"$1\" record -q --no-realtime -t 1 --size 160x120 -o \"$4$2\" -f \"$5\"; rc=$?; wait; exit $rc",
                                           "bash", Tools.livemux, fifo, saved, spelling, format], timeout: 30)
            XCTAssertEqual(r.status, 0, "\(spelling)\(fifo): \(r.stderr)")
            XCTAssertEqual(r.stderr, "", "\(spelling)\(fifo)")
            try assertClean(saved, format, "\(spelling)FIFO")
        }
    }
}
