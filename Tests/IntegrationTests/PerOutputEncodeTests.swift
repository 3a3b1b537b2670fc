import Foundation
import XCTest

/// Encode options before an `-o` are that output's (issue 39, item 1; issue 52, item 7): each output gets the
/// size, rate, codec and bit rates it asked for, outputs that ask the same share one encode,
/// and the others do not notice.
final class PerOutputEncodeTests: TemporaryDirectoryTestCase {
    /// A stream's bit rate from its packets' bytes over the file's duration, in kbit/s.
    static func kbps(_ path: String, _ type: String) throws -> Double {
        let p = try Tools.probe(path, packets: true)
        let index = try XCTUnwrap(p.stream(type)).index
        let bytes = (p.packets ?? []).filter { $0.stream_index == index }.reduce(0) { $0 + (Int($1.size) ?? 0) }
        return Double(bytes) * 8 / (try XCTUnwrap(p.format.seconds)) / 1000
    }

    /// libx264 says its profile once per encoder it opens (FFmpeg's log, with -v).
    static func videoEncodes(_ stderr: String) -> Int {
        stderr.split(separator: "\n").filter { $0.contains("[libx264 @") && $0.contains("profile") }.count
    }

    func testEachOutputGetsTheEncodeItAskedForAndEqualOnesShareIt() throws {
        let (a, b, c, d) = ("\(dir)/a.flv", "\(dir)/b.flv", "\(dir)/c.asf", "\(dir)/d.flv")
        // Each output's options before its -o (the first's are every output's), as in ffmpeg.
        let large = ["--vbitrate", "2M", "--size", "1280x720", "--fps", "30", "--abitrate", "128k"]
        let small = ["--vbitrate", "400k", "--size", "640x360", "--fps", "15", "--abitrate", "64k"]
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "6", "-v"] + large + ["-o", a] + small + ["-o", b] + small + ["-o", c]
                                  + large + ["-o", d])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(Self.videoEncodes(r.stderr), 2, "a and d share one encode, b and c the other")
        for (path, size, frames) in [(a, (1280, 720), 180), (d, (1280, 720), 180), (b, (640, 360), 90), (c, (640, 360), 90)] {
            let video = try XCTUnwrap(try Tools.probe(path).stream("video"), path)
            XCTAssertEqual([video.width, video.height], [size.0, size.1], path)
            XCTAssertEqual(video.packetCount, frames, path)
            XCTAssertEqual(try Tools.decodeErrors(path), "", path)
        }
        let (big, smallVideo) = (try Self.kbps(a, "video"), try Self.kbps(b, "video"))
        let (bigAudio, smallAudio) = (try Self.kbps(a, "audio"), try Self.kbps(b, "audio"))
        print("per-output encodes: video \(big) and \(smallVideo) kbit/s, audio \(bigAudio) and \(smallAudio) kbit/s")
        XCTAssertEqual(big, 2000, accuracy: 400)
        XCTAssertEqual(smallVideo, 400, accuracy: 80)
        XCTAssertEqual(smallAudio, 64, accuracy: 13)
        XCTAssertEqual(bigAudio, 128, accuracy: 26)
        XCTAssertEqual(try Tools.probe(d).stream("video")?.packetCount, try Tools.probe(a).stream("video")?.packetCount)
    }

    /// A push at its own size and bit rate beside a file at the recording's: the server records
    /// what the push asked for, the file keeps its own, both decode clean.
    func testAPushAtItsOwnSizeAndBitRateBesideAFile() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let server = try RTMPServer(directory: dir, name: "nginx")
        try server.start()
        defer { server.stop() }
        let file = "\(dir)/rec.flv"
        let r = try Tools.livemux(["record", "-t", "6", "--size", "1280x720", "--vbitrate", "2M", "-o", file,
                                   "-o", "rtmp://127.0.0.1:\(server.port)/live/key", "--vbitrate", "500k", "--size", "640x360"],
                                  timeout: 40)
        XCTAssertEqual(r.status, 0, r.stderr)
        server.stop()
        let pushed = try XCTUnwrap(try server.recordedFiles().last)
        let video = try XCTUnwrap(try Tools.probe(pushed).stream("video"))
        XCTAssertEqual([video.width, video.height], [640, 360])
        XCTAssertEqual(try Tools.decodeErrors(pushed), "")
        XCTAssertEqual(try Self.kbps(pushed, "video"), 500, accuracy: 100)
        let kept = try XCTUnwrap(try Tools.probe(file).stream("video"))
        XCTAssertEqual([kept.width, kept.height], [1280, 720])
        XCTAssertEqual(try Self.kbps(file, "video"), 2000, accuracy: 400)
        XCTAssertEqual(try Tools.decodeErrors(file), "")
    }
}
