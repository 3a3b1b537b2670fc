import Foundation
import XCTest

/// Numbers shown for a file mean something for a file (issue 18, item 13): `mux`'s progress line
/// shows packets, size, speed and drops (no capture latency, no read-as-fast-as-it-goes frame rate);
/// `report` counts a keyframe in the singular and takes N frames to last N frame durations.
final class FileNumbersTests: TemporaryDirectoryTestCase {
    /// An audio-only recording's progress line: printed once at the end (not a periodic line just
    /// before the last one, with other numbers), and without frames or A/V offset (issue 42, item 9).
    /// 5 s: a line every 5 s when stderr is not a terminal, so the periodic one falls at the end.
    func testAudioOnlyRecordingHasOneLastLineWithoutVideoFields() throws {
        let r = try Tools.livemux(["record", "--no-video", "-t", "5", "-o", "\(dir)/a.asf"], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("time=") }
        XCTAssertEqual(lines.count, 1, r.stderr)
        XCTAssertEqual(lines.last?.dropFirst("time=00:00:05.00".count).hasPrefix(" bitrate="), true, r.stderr)
        XCTAssertFalse(r.stderr.contains("frames=") || r.stderr.contains(" av="), r.stderr)
    }

    /// The README's first command's case: with video, the periodic line at 5 s came just before the
    /// sources ended, and the last line repeated it word for word (4 runs in 4).
    func testTheLastProgressLineIsNotARepeat() throws {
        let r = try Tools.livemux(["record", "-t", "5", "--size", "160x120", "-o", "\(dir)/a.flv"], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("time=") }
        XCTAssertEqual(zip(lines, lines.dropFirst()).filter { $0 == $1 }.count, 0, r.stderr)
        XCTAssertTrue(lines.last?.hasPrefix("time=00:00:04.9") == true, r.stderr)
    }

    func testMuxProgressLineShowsWhatAFileHas() throws {
        let src = "\(dir)/src.mp4"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30",
                                            "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "2", "-c:v", "libx264", "-bf", "0",
                                            "-c:a", "aac", src])
        XCTAssertEqual(made.status, 0, made.stderr)
        let r = try Tools.livemux(["mux", "--input", src, "-o", "\(dir)/out.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        // Not a terminal: the line is printed once, at the end.
        let line = try XCTUnwrap(r.stderr.split(separator: "\n").last.map(String.init), r.stderr)
        XCTAssertTrue(line.hasPrefix("time=00:00:0"), line)
        let p = try Tools.probe("\(dir)/out.flv")
        let video = try XCTUnwrap(p.stream("video")).packetCount, audio = try XCTUnwrap(p.stream("audio")).packetCount
        XCTAssertEqual(video, 60)
        XCTAssertTrue(line.contains(" packets=\(video + audio) video=\(video) audio=\(audio) "), line)
        XCTAssertTrue(line.contains(" speed="), line)
        XCTAssertTrue(line.hasSuffix(" dropped=0"), line)
        XCTAssertFalse(line.contains("latency"), line)
        XCTAssertFalse(line.contains("fps="), line)
    }

    func testReportRateAndPlurals() throws {
        let one = "\(dir)/one.flv", three = "\(dir)/three.asf"
        // 3 s at 30 fps: one keyframe with a 10 s GOP, three with a 1 s GOP.
        for (path, gop) in [(one, "10"), (three, "1")] {
            let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "3", "--size", "160x120", "--gop", gop, "-o", path])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(try Tools.probe(path).stream("video")?.packetCount, 90)
        }
        let a = try Tools.livemux(["report", one]).stdoutText
        XCTAssertTrue(a.contains("video h264 160x120, 90 packets, ") && a.contains(", 30.00 frames/s"), a)
        XCTAssertTrue(a.contains("GOP: 1 keyframe; starts with a keyframe"), a)
        let b = try Tools.livemux(["report", three]).stdoutText
        XCTAssertTrue(b.contains(", 30.00 frames/s"), b)
        XCTAssertTrue(b.contains("GOP: 3 keyframes, every 1.000 s = 30 frames"), b)
    }
}
