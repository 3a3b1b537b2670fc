import Foundation
import XCTest

/// Issue 18, items 3 and 4 for `livemux mux`: how elementary video (no timestamps) is timed.
final class MuxFrameRateTests: TemporaryDirectoryTestCase {
    func ffmpeg(_ args: [String]) throws {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args)
        XCTAssertEqual(r.status, 0, "ffmpeg \(args.joined(separator: " ")): \(r.stderr)")
    }

    /// 3 s of 160x120 video at `rate` as an elementary stream (x264 and x265 write timing info
    /// unless told not to).
    func elementary(_ name: String, rate: String, codec: String = "libx264", params: [String] = []) throws -> String {
        let path = "\(dir)/\(name)"
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=\(rate)", "-t", "3", "-c:v", codec, "-preset", "veryfast", "-bf", "0"]
                   + params + [path])
        return path
    }

    /// Muxes and returns ffprobe's r_frame_rate, the video's span in seconds, the packet count and stderr.
    func mux(_ args: [String], to name: String, decodeOptions: [String] = []) throws -> (rate: String?, seconds: Double, packets: Int, stderr: String) {
        let out = "\(dir)/\(name)"
        let r = try Tools.livemux(["mux"] + args + ["-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try Tools.probe(out, packets: true)
        let v = try XCTUnwrap(p.stream("video"))
        let times = (p.packets ?? []).filter { $0.stream_index == v.index }.compactMap { $0.pts ?? $0.dts }
        XCTAssertEqual(try Tools.decodeErrors(out, inputOptions: decodeOptions), "", "decodes without errors")
        let span = Double((times.max() ?? 0) - (times.min() ?? 0)) / 1000
        return (v.r_frame_rate, span, times.count, r.stderr)
    }

    func warnings(_ stderr: String) -> [Substring] { stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") } }

    /// Without --fps, the rate the SPS states: 30 fps video against 3 s of audio is 3 s long,
    /// not 3.6 s at FFmpeg's 25 (issue 18, item 3).
    func testH264RateFromSPSTiming() throws {
        let audio = "\(dir)/a.aac"
        try ffmpeg(["-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "3", "-c:a", "aac", audio])
        for (rate, expected) in [("30", "30/1"), ("30000/1001", "30000/1001"), ("50", "50/1")] {
            let clip = try elementary("v\(expected.replacingOccurrences(of: "/", with: "_")).h264", rate: rate)
            let m = try mux(["--video", clip, "--audio", audio], to: "sps\(expected.replacingOccurrences(of: "/", with: "_")).flv")
            XCTAssertEqual(m.rate, expected, rate)
            XCTAssertEqual(m.packets, 90 * Int(expected.prefix(2))! / 30, rate)
            XCTAssertEqual(m.seconds, Double(m.packets - 1) / (Double(expected.prefix(2))! * (rate.contains("1001") ? 1000 / 1001.0 : 1)),
                           accuracy: 0.002, rate)
            XCTAssertEqual(warnings(m.stderr), [], rate)
        }
        // The rate comes from the SPS, not from the frames: an SPS rewritten to say 24 fps is 24.
        let relabelled = "\(dir)/v24.h264"
        try ffmpeg(["-i", try elementary("v30.h264", rate: "30"), "-c", "copy", "-bsf:v", "h264_metadata=tick_rate=48", relabelled])
        XCTAssertEqual(try mux(["--video", relabelled], to: "v24.asf").rate, "24/1")
    }

    /// An SPS without timing info: 25 fps as before, and one warning that says to give --fps.
    func testH264WithoutTimingWarns() throws {
        let timed = try elementary("timed.h264", rate: "30")
        let stripped = try XCTUnwrap(H264Timing.strip([UInt8](try Data(contentsOf: URL(fileURLWithPath: timed)))))
        let clip = "\(dir)/untimed.h264"
        try Data(stripped).write(to: URL(fileURLWithPath: clip))
        // ffprobe agrees the stream states no rate: it falls back to its own 25.
        let probe = try Tools.probe(clip)
        XCTAssertEqual(probe.stream("video")?.r_frame_rate, "25/1")
        let m = try mux(["--video", clip], to: "untimed.asf")
        XCTAssertEqual(m.rate, "25/1")
        XCTAssertEqual(m.packets, 90)
        XCTAssertEqual(warnings(m.stderr).count, 1, m.stderr)
        XCTAssertTrue(m.stderr.contains("--fps") && m.stderr.contains("25 fps"), m.stderr)
        let given = try mux(["--video", clip, "--fps", "30"], to: "given.asf")
        XCTAssertEqual(given.rate, "30/1")
        XCTAssertEqual(warnings(given.stderr), [])
    }

    /// HEVC: the rate from the VPS/SPS timing x265 writes; without it (vui-timing-info=0), a warning.
    func testHEVCRateFromTimingInfo() throws {
        let timed = try elementary("timed.hevc", rate: "30", codec: "libx265", params: ["-x265-params", "log-level=none"])
        // FFmpeg 5.1's ASF reader maps no HEVC tag: the decoder is named.
        let hevc = ["-vcodec", "hevc"]
        let m = try mux(["--video", timed], to: "timed.asf", decodeOptions: hevc)
        XCTAssertEqual(m.rate, "30/1")
        XCTAssertEqual(m.seconds, 89 / 30.0, accuracy: 0.002)
        XCTAssertEqual(warnings(m.stderr), [])
        let untimed = try elementary("untimed.hevc", rate: "30", codec: "libx265", params: ["-x265-params", "log-level=none:vui-timing-info=0"])
        let u = try mux(["--video", untimed], to: "untimed.asf", decodeOptions: hevc)
        XCTAssertEqual(u.rate, "25/1")
        XCTAssertEqual(warnings(u.stderr).count, 1, u.stderr)
    }

    /// --fps always wins over what the stream states.
    func testGivenFPSWins() throws {
        let clip = try elementary("v.h264", rate: "30")
        let m = try mux(["--video", clip, "--fps", "24"], to: "v.asf")
        XCTAssertEqual(m.rate, "24/1")
        XCTAssertEqual(m.seconds, 89 / 24.0, accuracy: 0.002)
        XCTAssertEqual(warnings(m.stderr), [])
    }

    /// `--fps 29.97` and `--fps 30000/1001` time frame n at n · 1001/30000 s.
    func testRationalFPS() throws {
        let clip = try elementary("v.h264", rate: "30000/1001")
        for (i, fps) in ["29.97", "30000/1001"].enumerated() {
            let m = try mux(["-q", "--video", clip, "--fps", fps], to: "ntsc\(i).asf")
            XCTAssertEqual(m.rate, "30000/1001", fps)
            XCTAssertEqual(m.packets, 90)
            XCTAssertEqual(m.seconds, 89 * 1001 / 30000.0, accuracy: 0.002, fps)
        }
    }
}
