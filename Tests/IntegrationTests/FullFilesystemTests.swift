import Foundation
import XCTest

/// A real filesystem that fills up while recording (a 512 KiB tmpfs), unlike /dev/full, which
/// refuses the very first write: the header and the first seconds are on disk when ENOSPC comes.
final class FullFilesystemTests: XCTestCase {
    func testSmallFilesystemFillsUp() throws {
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let mount = try Tools.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", dir])
        guard mount.status == 0 else { throw XCTSkip("cannot mount a tmpfs here: \(mount.stderr)") }
        defer { _ = try? Tools.run("/usr/bin/umount", [dir]) }
        for format in ["asf", "flv"] {
            let path = "\(dir)/rec.\(format)"
            let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "600", "--size", "160x120", "--vbitrate", "2M",
                                       "-o", path], timeout: 30 * Tools.slowdown)
            XCTAssertEqual(r.status, 1, format)
            XCTAssertEqual(r.stderr, "error: cannot write to \(path): the disk is full (free some space or record to another disk)\n", format)
            XCTAssertLessThan(r.seconds, 20 * Tools.slowdown, "the full disk stops the run promptly")
            // What was written up to then is a readable recording: its header and whole packets.
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            XCTAssertGreaterThan(size, 256 * 1024, "\(format): the disk was filled, not refused at once")
            let probe = try Tools.probe(path)
            XCTAssertEqual(probe.stream("video")?.codec_name, "h264", format)
            XCTAssertEqual(probe.stream("audio")?.codec_name, "aac", format)
            XCTAssertGreaterThan(Int(probe.stream("video")?.nb_read_packets ?? "0") ?? 0, 25, format)
            try FileManager.default.removeItem(atPath: path)
        }
    }
}
