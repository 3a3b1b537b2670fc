import Foundation
import XCTest

/// Issue 18, items 3 and 4 for `livemux mux`: how elementary video (no timestamps) is timed.
final class MuxFrameRateTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws { dir = try Tools.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

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
    func mux(_ args: [String], to name: String) throws -> (rate: String?, seconds: Double, packets: Int, stderr: String) {
        let out = "\(dir)/\(name)"
        let r = try Tools.livemux(["mux"] + args + ["-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try Tools.probe(out, packets: true)
        let v = try XCTUnwrap(p.stream("video"))
        let times = (p.packets ?? []).filter { $0.stream_index == v.index }.compactMap { $0.pts ?? $0.dts }
        XCTAssertEqual(try Tools.decodeErrors(out), "", "decodes without errors")
        let span = Double((times.max() ?? 0) - (times.min() ?? 0)) / 1000
        return (v.r_frame_rate, span, times.count, r.stderr)
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
