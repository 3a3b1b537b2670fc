import Foundation
import XCTest

/// Segment names the pattern will produce that are already taken (issue 38): without -y a
/// numbered pattern is refused at the start when any of its names exists, and a name taken
/// during the run (by someone else, or a dated name that repeats) sends that segment to the next
/// free name (`p002-1.asf`) with a warning, instead of ending the recording.
final class SegmentNameTakenTests: TemporaryDirectoryTestCase {
    func contents() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir).sorted() }

    /// Reads a segment back: ffprobe sees both streams and ffmpeg decodes it clean.
    func assertPlayable(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let probe = try Tools.probe(path)
        XCTAssertEqual(probe.stream("video")?.codec_name, "h264", path, file: file, line: line)
        XCTAssertEqual(probe.stream("audio")?.codec_name, "aac", path, file: file, line: line)
        XCTAssertEqual(try Tools.decodeErrors(path), "", path, file: file, line: line)
    }

    /// Any later number that exists is found by scanning the directory (not just the first name):
    /// one usage error naming the first one, nothing created or touched; names of another shape
    /// (`p01.asf` is not `%03d`'s) do not count. --segment-start-number goes on after them.
    func testNumberedPatternRefusedAtTheStartWhenALaterNameExists() throws {
        for name in ["p250.asf", "p007.asf"] { try Data("old".utf8).write(to: URL(fileURLWithPath: "\(dir)/\(name)")) }
        for other in ["p01.asf", "p007.asf.bak", "q003.asf"] { try Data().write(to: URL(fileURLWithPath: "\(dir)/\(other)")) }
        let before = try contents()
        let args = ["record", "-q", "--no-realtime", "-t", "3", "--size", "160x120", "--gop", "1", "--segment-time", "1",
                    "--stats", "\(dir)/s.jsonl", "--segment-list", "\(dir)/l.ffconcat", "-o", "\(dir)/p%03d.asf"]
        let r = try Tools.livemux(args)
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("error: \(dir)/p007.asf exists"), r.stderr)
        for fix in ["-y", "--segment-start-number 251"] { XCTAssertTrue(r.stderr.contains(fix), r.stderr) }
        XCTAssertEqual(try contents(), before, "nothing created")
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/p007.asf", encoding: .utf8), "old")

        let after = try Tools.livemux(args + ["--segment-start-number", "251"])
        XCTAssertEqual(after.status, 0, after.stderr)
        for i in 251...253 { try assertPlayable("\(dir)/p\(i).asf") }
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/p250.asf", encoding: .utf8), "old")
    }

    /// A name taken during the run (another program made p002.asf after the start was checked):
    /// that segment goes to p002-1.asf with one warning, the run goes on to its end, exit 0, and
    /// the list and --stats name the file written; the other file is not touched.
    func testNameTakenDuringTheRunGoesToTheNextFreeName() throws {
        let stats = "\(dir)/s.jsonl", list = "\(dir)/l.ffconcat"
        let r = try Tools.livemux(["record", "-t", "3", "--size", "160x120", "--gop", "1", "--segment-time", "1",
                                   "--stats", stats, "--segment-list", list, "-o", "\(dir)/p%03d.asf"]) { _ in
            // The first segment is written: the names were checked at the start.
            waitUntil(deadline: 10) { FileManager.default.fileExists(atPath: "\(self.dir)/p000.asf") }
            try? Data("someone else's".utf8).write(to: URL(fileURLWithPath: "\(self.dir)/p002.asf"))
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        XCTAssertEqual(warnings, ["warning: \(dir)/p002.asf exists: segment 2 is written to \(dir)/p002-1.asf instead"], r.stderr)
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/p002.asf", encoding: .utf8), "someone else's")
        let written = ["p000.asf", "p001.asf", "p002-1.asf"]
        for name in written { try assertPlayable("\(dir)/\(name)") }
        let text = try String(contentsOfFile: list, encoding: .utf8)
        XCTAssertEqual(text.split(separator: "\n").filter { $0.hasPrefix("file ") }, written.map { "file '\($0)'" }, text)
        let last = try XCTUnwrap(try TimingTests.statsLines(stats).last)
        let closed = try XCTUnwrap(last["segments_closed"] as? [[String: Any]])
        XCTAssertEqual(closed.map { $0["path"] as? String }, written.map { "\(dir)/\($0)" })
        XCTAssertTrue(r.stderr.contains("segment \(dir)/p002-1.asf closed"), r.stderr)
    }

    /// A dated name that repeats (`%Y`: every segment of the run has the same one), and exists
    /// before the start: every segment gets the next free name, each with its warning.
    func testRepeatedDatedNameGoesToTheNextFreeName() throws {
        let year = Calendar.current.component(.year, from: Date())
        let taken = "\(dir)/d-\(year).flv"
        try Data("old".utf8).write(to: URL(fileURLWithPath: taken))
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "3", "--size", "160x120", "--gop", "1", "--segment-time", "1",
                                   "-o", "\(dir)/d-%Y.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }.count, 3, r.stderr)
        XCTAssertEqual(try String(contentsOfFile: taken, encoding: .utf8), "old")
        XCTAssertEqual(try contents(), ["d-\(year)-1.flv", "d-\(year)-2.flv", "d-\(year)-3.flv", "d-\(year).flv"])
        for i in 1...3 {
            let path = "\(dir)/d-\(year)-\(i).flv"
            try assertPlayable(path)
            XCTAssertEqual(try XCTUnwrap(try Tools.probe(path).format.seconds), 1, accuracy: 0.03, path)
        }
    }
}
