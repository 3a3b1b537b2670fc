import Foundation
import XCTest

/// Segments are cut at keyframes (issue 42, item 7): without --gop the keyframe interval is chosen
/// so the segments last --segment-time; a --gop they cannot be cut by is said once.
final class SegmentKeyframeTests: TemporaryDirectoryTestCase {
    let common = ["record", "--no-realtime", "--size", "160x120", "--fps", "30"]

    /// The `duration` lines of an ffconcat list, one per closed segment.
    func durations(_ list: String) throws -> [Double] {
        try String(contentsOfFile: list, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("duration ") }.compactMap { Double($0.dropFirst("duration ".count)) }
    }

    func testWithoutGOPTheSegmentsLastTheSegmentTime() throws {
        let list = "\(dir)/l.ffconcat"
        let r = try Tools.livemux(common + ["-q", "-t", "4", "--segment-time", "1", "--segment-list", list, "-o", "\(dir)/p%03d.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "nothing to warn about")
        let seconds = try durations(list)
        XCTAssertEqual(seconds.count, 4, "\(seconds)")
        for s in seconds { XCTAssertEqual(s, 1, accuracy: 0.001, "\(seconds)") }
    }

    func testAGOPLongerThanTheSegmentTimeIsSaidOnce() throws {
        let list = "\(dir)/l.ffconcat"
        let r = try Tools.livemux(common + ["-t", "4", "--gop", "2", "--segment-time", "1", "--segment-list", list, "-o", "\(dir)/p%03d.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        XCTAssertEqual(warnings, ["warning: --gop 2 s does not divide --segment-time 1 s: segments are cut at keyframes, so each"
                                  + " will last about 2 s; give a --gop that divides it, or leave --gop out to have one chosen"], r.stderr)
        for s in try durations(list) { XCTAssertEqual(s, 2, accuracy: 0.001) }
    }
}
