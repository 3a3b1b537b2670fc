import Foundation
import XCTest

/// Issue 18, items 2 and 4: an explicit source keeps its own size, frame rate, sample rate and
/// channels unless options ask for others; frame rates are exact rationals (29.97 = 30000/1001).
final class SourceFormatTests: TemporaryDirectoryTestCase {
    struct Format: Equatable {
        var width: Int?, height: Int?, rate: String?, sampleRate: String?, channels: Int?
    }

    /// Records 2 s (unpaced) and returns what ffprobe reads, and livemux's stderr.
    func record(_ name: String, _ args: [String], seconds: Double = 2) throws -> (Format, Probe, String) {
        let path = "\(dir)/\(name)"
        let r = try Tools.livemux(["record", "--no-realtime", "-t", String(seconds)] + args + ["-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try Tools.probe(path, packets: true)
        let v = p.stream("video"), a = p.stream("audio")
        XCTAssertEqual(try Tools.decodeErrors(path), "", "decodes without errors")
        return (Format(width: v?.width, height: v?.height, rate: v?.r_frame_rate, sampleRate: a?.sample_rate, channels: a?.channels), p, r.stderr)
    }

    func warnings(_ stderr: String) -> [Substring] { stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") } }

    /// The README's avsynctest example at its own 320x240, 25 fps, 44.1 kHz mono.
    func testCombinedInputKeepsItsFormat() throws {
        let (f, p, stderr) = try record("sync.asf", ["--input", "lavfi:avsynctest=size=320x240:framerate=25:samplerate=44100[out0][out1]"])
        XCTAssertEqual(f, Format(width: 320, height: 240, rate: "25/1", sampleRate: "44100", channels: 1))
        XCTAssertEqual(warnings(stderr), [])
        XCTAssertEqual(Double(try XCTUnwrap(p.stream("video")).packetCount), 50, accuracy: 1, "2 s at 25 fps")
        XCTAssertEqual(Double(try XCTUnwrap(p.stream("audio")).packetCount), (2 * 44100 / 1024.0).rounded(.up), accuracy: 2, "2 s at 44.1 kHz")
    }

    func testVideoSourceKeepsItsFormat() throws {
        let (f, _, stderr) = try record("v.flv", ["--video", "lavfi:testsrc=size=320x240:rate=25"])
        XCTAssertEqual(f, Format(width: 320, height: 240, rate: "25/1", sampleRate: "48000", channels: 2), "the built-in tone stays 48 kHz stereo")
        XCTAssertEqual(warnings(stderr), [])
    }

    func testBuiltInSourcesKeepTheDefaults() throws {
        let (f, _, _) = try record("d.asf", ["-q"], seconds: 1)
        XCTAssertEqual(f, Format(width: 1280, height: 720, rate: "30/1", sampleRate: "48000", channels: 2))
    }

    /// A file made by ffmpeg (352x288, 24 fps, 22.05 kHz stereo) keeps its format; options convert it.
    func testFileSourceKeepsItsFormatAndOptionsConvertIt() throws {
        let src = "\(dir)/src.mp4"
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=352x288:rate=24",
                                         "-f", "lavfi", "-i", "sine=sample_rate=22050", "-ac", "2", "-t", "2",
                                         "-c:v", "libx264", "-preset", "veryfast", "-c:a", "aac", src])
        XCTAssertEqual(r.status, 0, r.stderr)
        let (own, _, _) = try record("own.asf", ["-q", "--input", src])
        XCTAssertEqual(own, Format(width: 352, height: 288, rate: "24/1", sampleRate: "22050", channels: 2))
        let (converted, p, _) = try record("converted.flv", ["-q", "--input", src, "--size", "320x240", "--fps", "30",
                                                             "--sample-rate", "48000", "--channels", "1"])
        XCTAssertEqual(converted, Format(width: 320, height: 240, rate: "30/1", sampleRate: "48000", channels: 1))
        // Every one of the 48 frames is kept, each in its slot of the 1/30 s grid.
        let v = try XCTUnwrap(p.stream("video"))
        let times = (p.packets ?? []).filter { $0.stream_index == v.index }.compactMap { $0.pts ?? $0.dts }
        XCTAssertEqual(times.count, 48)
        let offGrid = times.filter { t in abs(Double(t) - (Double(t) * 30 / 1000).rounded() * 1000 / 30) > 1 }
        XCTAssertEqual(offGrid, [], "frames off the 1/30 s grid")
    }

    /// 37.8 kHz is no AAC rate: the nearest one, 32 kHz, with a note.
    func testRateAACCannotTakeIsResampled() throws {
        let (f, _, stderr) = try record("a.asf", ["--no-video", "--audio", "lavfi:sine=sample_rate=37800"])
        XCTAssertEqual(f.sampleRate, "32000")
        XCTAssertEqual(f.channels, 1)
        XCTAssertEqual(warnings(stderr).count, 1, stderr)
        XCTAssertTrue(stderr.contains("37800") && stderr.contains("32000 Hz"), stderr)
    }

    /// A rate beyond what LiveMux records at is not kept: 30 fps, and a warning naming --fps.
    func testUnusableSourceRateFallsBackWithAWarning() throws {
        let (f, p, stderr) = try record("fast.asf", ["--no-audio", "--video", "lavfi:testsrc=size=160x120:rate=1000"], seconds: 1)
        XCTAssertEqual(f.rate, "30/1")
        XCTAssertEqual(Double(try XCTUnwrap(p.stream("video")).packetCount), 30, accuracy: 1)
        XCTAssertEqual(warnings(stderr).count, 1, stderr)
        XCTAssertTrue(stderr.contains("--fps"), stderr)
        XCTAssertTrue(stderr.contains("runs at 1000 fps, outside the 1 to 240 fps"), "a fixed rate, just too high: \(stderr)")
    }

    /// 29.97 is 30000/1001 everywhere: the SPS timing, the -t cut, the GOP and every timestamp.
    func testNTSCFrameRate() throws {
        for (name, rate) in [("ntsc.asf", "29.97"), ("ntsc.flv", "30000/1001")] {
            let (f, p, _) = try record(name, ["-q", "--size", "160x120", "--fps", rate], seconds: 10)
            XCTAssertEqual(f.rate, "30000/1001", name)
            let v = try XCTUnwrap(p.stream("video"))
            let packets = (p.packets ?? []).filter { $0.stream_index == v.index }
            XCTAssertEqual(Double(packets.count), 300, accuracy: 1, "\(name): -t 10 at 29.97 fps")
            // Frame n is at n · 1001/30 ms, to the millisecond the containers keep (ASF gives
            // only DTS, which is the PTS: nothing is reordered).
            let pts = packets.compactMap { $0.pts ?? $0.dts }
            XCTAssertEqual(pts.count, packets.count)
            let offGrid = pts.enumerated().filter { abs(Double($0.element - pts[0]) - Double($0.offset) * 1001 / 30) > 1 }
            XCTAssertEqual(offGrid.count, 0, "\(name): frames off the 30000/1001 grid: \(offGrid.prefix(5))")
            if let last = pts.last, pts.count > 1 {
                XCTAssertEqual(Double(pts.count - 1) * 1000 / Double(last - pts[0]), 30000 / 1001.0, accuracy: 0.01, "\(name): average rate")
            }
            // A GOP of 2 s is 60 frames (59.94 rounded).
            let keyframes = packets.enumerated().filter { $0.element.flags.hasPrefix("K") }.map(\.offset)
            XCTAssertEqual(keyframes, Array(stride(from: 0, to: packets.count, by: 60)), name)
        }
    }
}
