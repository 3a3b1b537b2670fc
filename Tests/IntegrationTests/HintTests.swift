import Foundation
import XCTest

/// A hint names what is really wrong (issue 42, item 6): a directory that exists but takes no new
/// files is not one to create, and the process's own stdout, made by the shell's `>` for this run,
/// is written as outputs write a device or pipe, not refused as a file that exists.
final class HintTests: TemporaryDirectoryTestCase {
    let short = ["record", "-q", "--no-realtime", "-t", "0.3", "--size", "160x120"]

    func testADirectoryThatTakesNoNewFilesIsNotOneToCreate() throws {
        let r = try Tools.livemux(short + ["-o", "/proc/x.asf"], timeout: 20)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertFalse(r.stderr.contains("create the directory"), r.stderr)
        XCTAssertEqual(r.stderr, "error: cannot create /proc/x.asf: No such file or directory"
                       + " (/proc exists but takes no new files: choose a directory on a disk)\n")
    }

    func testStatsToStdoutRedirectedToAFileIsWritten() throws {
        let captured = "\(dir)/captured.jsonl"
        let r = try Tools.livemux(short + ["-o", "\(dir)/a.flv", "--stats", "/dev/stdout"], stdoutTo: captured, timeout: 20)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        let lines = try String(contentsOfFile: captured, encoding: .utf8).split(separator: "\n")
        XCTAssertTrue(lines.last?.contains("\"final\":true") == true, "\(lines)")
    }

    func testOutputToStdoutRedirectedToAFileIsWritten() throws {
        let captured = "\(dir)/captured.flv"
        let r = try Tools.livemux(short + ["-o", "/dev/stdout", "-f", "flv"], stdoutTo: captured, timeout: 20)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.probe(captured).streams.count, 2)
    }
}
