import Foundation
import XCTest

/// A `--segment-keep` list that cannot be replaced whole (issue 42, item 16): the failure is one
/// warning, and the list, rewritten in place, still names just the segments kept.
final class SegmentListFaultTests: TemporaryDirectoryTestCase {
    func testAListThatCannotBeReplacedIsSaidOnceAndStaysRight() throws {
        let list = "\(dir)/l.ffconcat"
        let args = ["record", "-q", "-t", "3.5", "--size", "160x120", "--segment-time", "1", "--segment-keep", "2",
                    "--segment-list", list, "-o", "\(dir)/p%03d.flv"]
        let r = try Tools.livemux(args, timeout: 30) { child in
            // A directory where the new list would be made: every replacement fails.
            let blocked = "\(self.dir)/.l.ffconcat.\(child.pid).tmp"
            XCTAssertEqual(mkdir(blocked, 0o755), 0)
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        XCTAssertEqual(warnings.count, 1, r.stderr)
        XCTAssertTrue(warnings.first?.hasPrefix("warning: cannot replace the segment list \(list) whole (") == true, r.stderr)
        XCTAssertTrue(warnings.first?.hasSuffix("it is rewritten in place instead") == true, r.stderr)
        let named = try String(contentsOfFile: list, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("file ") }
        XCTAssertEqual(named, ["file 'p002.flv'", "file 'p003.flv'"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".flv") }.sorted(),
                       ["p002.flv", "p003.flv"])
    }
}
