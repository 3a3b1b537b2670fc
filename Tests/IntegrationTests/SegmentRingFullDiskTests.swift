import Foundation
import XCTest

/// A ring (`--segment-keep`) on a disk that fills before the ring does (issue 38): the oldest
/// kept segment is deleted to make room, with one warning, and the recording goes on; the segment
/// being written when the disk filled keeps the write that failed (every frame of its span).
final class SegmentRingFullDiskTests: TemporaryDirectoryTestCase {
    var small = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        small = "\(dir)/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: false)
        // 3 MiB: about nine 330 KB segments, where the ring would keep 50.
        let mount = try Tools.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", small])
        guard mount.status == 0 else { throw XCTSkip("cannot mount a tmpfs here: \(mount.stderr)") }
    }

    override func tearDownWithError() throws {
        if !small.isEmpty { _ = try? Tools.run("/usr/bin/umount", [small]) }
        try super.tearDownWithError()
    }

    func testFullDiskDeletesTheOldestKeptSegmentAndGoesOn() throws {
        for format in ["flv", "asf"] {
            let stats = "\(dir)/s-\(format).jsonl", list = "\(dir)/l-\(format).ffconcat"
            let r = try Tools.livemux(["record", "--no-realtime", "-t", "60", "--size", "160x120", "--vbitrate", "1M", "--gop", "0.5",
                                       "--segment-size", "300k", "--segment-keep", "50", "--stats", stats, "--segment-list", list,
                                       "-o", "\(small)/r-%03d.\(format)"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
            XCTAssertEqual(warnings.count, 1, r.stderr)
            XCTAssertTrue(warnings.first?.contains("disk is full") ?? false, r.stderr)

            let last = try XCTUnwrap(try TimingTests.statsLines(stats).last)
            let closed = try XCTUnwrap(last["segments_closed"] as? [[String: Any]])
            let spans = closed.map { (path: $0["path"] as? String ?? "", start: $0["start_s"] as? Double ?? -1, end: $0["end_s"] as? Double ?? -1) }
            XCTAssertGreaterThan(spans.count, 12, "more segments than the disk holds")
            XCTAssertEqual(spans.last?.end ?? 0, 60, accuracy: 0.05, "recorded to the end")
            for (a, b) in zip(spans, spans.dropFirst()) { XCTAssertEqual(a.end, b.start, "no gap between \(a.path) and \(b.path)") }

            // What is left is the newest segments, each playable and holding every frame of its span.
            let left = try FileManager.default.contentsOfDirectory(atPath: small).sorted().map { "\(small)/\($0)" }
            XCTAssertGreaterThanOrEqual(left.count, 4)
            XCTAssertEqual(left, spans.suffix(left.count).map(\.path))
            for s in spans.suffix(left.count) {
                let probe = try Tools.probe(s.path)
                XCTAssertEqual(probe.stream("video")?.packetCount, Int(((s.end - s.start) * 30).rounded()), s.path)
                XCTAssertEqual(try Tools.decodeErrors(s.path), "", s.path)
            }
            // The list names just the files on disk, and plays.
            let text = try String(contentsOfFile: list, encoding: .utf8)
            XCTAssertEqual(text.split(separator: "\n").filter { $0.hasPrefix("file ") },
                           left.map { "file '\($0)'" }, text)
            let concat = try Tools.run("ffmpeg", ["-v", "error", "-f", "concat", "-safe", "0", "-i", list, "-f", "null", "-"])
            XCTAssertEqual(concat.status, 0, concat.stderr)
            XCTAssertEqual(concat.stderr, "", format)
            for name in try FileManager.default.contentsOfDirectory(atPath: small) {
                try FileManager.default.removeItem(atPath: "\(small)/\(name)")
            }
        }
    }
}
