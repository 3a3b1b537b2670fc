import Foundation
import XCTest

/// Input livemux cannot read is one `error:` line that names the problem and the fix, never
/// FFmpeg's function names and raw codes; `-v` adds them on a `debug:` line (issue 18, item 11).
final class ErrorMessageTests: TemporaryDirectoryTestCase {
    /// `avformat_open_input(...)`, `(-1094995529)`: what must not reach a person without -v.
    func assertClean(_ stderr: String, mentions: String, file: StaticString = #filePath, line: UInt = #line) {
        let lines = stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, stderr, file: file, line: line)
        XCTAssertTrue(stderr.hasPrefix("error: "), stderr, file: file, line: line)
        XCTAssertTrue(stderr.contains(mentions), "\(stderr) should mention \(mentions)", file: file, line: line)
        XCTAssertNil(stderr.range(of: #"\(-[0-9]+\)"#, options: .regularExpression), "raw code: \(stderr)", file: file, line: line)
        XCTAssertNil(stderr.range(of: #"av[a-z]*_[a-z_0-9]+\("#, options: .regularExpression), "C function: \(stderr)", file: file, line: line)
    }

    func testUnreadableInputsAreExplained() throws {
        let notes = "\(dir)/notes.txt", out = "\(dir)/out.asf"
        try "just text\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (["mux", "--input", notes, "-o", out], "container such as MP4"),
            (["mux", "--video", notes, "-o", out], "container such as MP4"),
            (["mux", "--audio", notes, "-o", out], "container such as MP4"),
            (["record", "--input", notes, "-o", out], "check the device or path"),
            (["report", notes], "give a recording"),
            (["record", "--video", "lavfi:testsrc", "--video-opt", "bogus=1", "-o", out], "has no option 'bogus'"),
        ]
        for (args, hint) in cases {
            let r = try Tools.livemux(args, timeout: 15)
            XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
            assertClean(r.stderr, mentions: hint)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing written")
    }

    /// Hints that pointed at the wrong thing (issue 32, item 11): an address this machine does
    /// not have said "choose another port"; a read-only file with -y said "choose a writable
    /// directory". (x11grab's refused size: DeviceHintTests.)
    func testHintsNameWhatIsWrong() throws {
        let listen = try Tools.livemux(["serve", "-q", "--listen", "10.99.99.99:8080", "-t", "1"], timeout: 15)
        XCTAssertEqual(listen.status, 1, listen.stderr)
        assertClean(listen.stderr, mentions: "no interface of this machine has the address 10.99.99.99")
        XCTAssertFalse(listen.stderr.contains("port"), "the port is not the problem: \(listen.stderr)")

        let readOnly = "\(dir)/read-only.asf"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: readOnly))
        XCTAssertEqual(chmod(readOnly, 0o444), 0)
        // Root writes any file: run as nobody, for whom the file (and the directory) is read-only.
        let record = ["record", "-q", "-y", "--no-realtime", "-t", "0.3", "--size", "160x120"]
        let asUser = getuid() == 0 ? ["--reuid=65534", "--regid=65534", "--clear-groups", "--", Tools.livemux] : []
        func run(_ output: String) throws -> Tools.Result {
            try Tools.run(asUser.isEmpty ? Tools.livemux : "setpriv", asUser + record + ["-o", output], timeout: 15)
        }
        let file = try run(readOnly)
        XCTAssertEqual(file.status, 1, file.stderr)
        assertClean(file.stderr, mentions: "the file exists and is not writable")
        XCTAssertFalse(file.stderr.contains("directory"), file.stderr)
        XCTAssertEqual(FileManager.default.contents(atPath: readOnly), Data("keep".utf8), "untouched")
        if !asUser.isEmpty {
            let directory = try run("\(dir)/new.asf")
            XCTAssertEqual(directory.status, 1, directory.stderr)
            assertClean(directory.stderr, mentions: "its directory is not writable")
        }
    }

    func testVerboseKeepsTheRawCall() throws {
        let notes = "\(dir)/notes.txt"
        try "just text\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let r = try Tools.livemux(["mux", "-v", "--input", notes, "-o", "\(dir)/out.asf"], timeout: 15)
        XCTAssertEqual(r.status, 1)
        let debug = try XCTUnwrap(r.stderr.split(separator: "\n").first { $0.hasPrefix("debug: ") }, r.stderr)
        XCTAssertTrue(debug.contains("avformat_open_input(\(notes)): Invalid data found when processing input (-1094995529)"), String(debug))
        XCTAssertTrue(r.stderr.hasSuffix("error: cannot read \(notes): Invalid data found when processing input"
                                         + " (give H.264/HEVC and AAC in a container such as MP4, MKV, FLV, ASF or TS,"
                                         + " or elementary .h264, .h265 and .aac files)\n"), r.stderr)
    }
}
