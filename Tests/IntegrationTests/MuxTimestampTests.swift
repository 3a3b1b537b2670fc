import Foundation
import XCTest

/// `livemux mux` keeps every frame whatever timestamps the container stores: Matroska stores no
/// decoding timestamps, MP4, TS and FLV do; with and without B-frames, into ASF and FLV. A mux
/// that has to drop more than 1% of a stream fails unless `--allow-drops`.
final class MuxTimestampTests: TemporaryDirectoryTestCase {
    let containers = ["mkv", "mp4", "ts", "flv"]

    func ffmpeg(_ args: [String]) throws {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args)
        XCTAssertEqual(r.status, 0, "ffmpeg \(args.joined(separator: " ")): \(r.stderr)")
    }

    /// Decoded video frames' hashes, in presentation order.
    func videoHashes(_ path: String, inputOptions: [String] = []) throws -> [String] {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error"] + inputOptions + ["-i", path, "-map", "0:v", "-f", "framemd5", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// First video PTS minus first audio PTS, in seconds (ffprobe's start times).
    func videoLead(_ path: String) throws -> Double {
        let r = try Tools.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "csv=p=0", path])
        var start: [String: Double] = [:]
        for line in r.stdoutText.split(separator: "\n") {
            let f = line.split(separator: ",")
            if f.count == 2 { start[String(f[0])] = Double(f[1]) }
        }
        return try XCTUnwrap(start["video"]) - XCTUnwrap(start["audio"])
    }

    /// 3 s of 160x120 H.264 at 30 fps + 48 kHz AAC in each container; `bFrames` 0 or x264's default (3, pyramid).
    func makeSources(bFrames: Int?) throws -> String {
        let base = "\(dir)/src-bf\(bFrames ?? 3)"
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                    "-t", "3", "-c:v", "libx264", "-preset", "veryfast", "-g", "30"] + (bFrames.map { ["-bf", String($0)] } ?? [])
                   + ["-c:a", "aac", "\(base).mkv"])
        for c in containers.dropFirst() { try ffmpeg(["-i", "\(base).mkv", "-c", "copy", "\(base).\(c)"]) }
        return base
    }

    func checkEveryFrameKept(bFrames: Int?) throws {
        let base = try makeSources(bFrames: bFrames)
        let source = try videoHashes("\(base).mkv")
        XCTAssertEqual(source.count, 90)
        let audioPackets = try XCTUnwrap(Tools.probe("\(base).mkv").stream("audio")).packetCount
        for input in containers {
            for output in ["asf", "flv"] {
                let out = "\(base)-\(input).\(output)", what = "\(input) → \(output)"
                let r = try Tools.livemux(["mux", "-q", "--input", "\(base).\(input)", "-o", out])
                XCTAssertEqual(r.status, 0, "\(what): \(r.stderr)")
                XCTAssertEqual(r.stderr, "", what)
                XCTAssertEqual(try videoHashes(out), source, "\(what): every frame, in order")
                XCTAssertEqual(try XCTUnwrap(Tools.probe(out).stream("audio")).packetCount, audioPackets, what)
                XCTAssertEqual(try Tools.decodeErrors(out), "", what)
                if output == "flv" {
                    // The file's own A/V timing: its first picture shows as long after the first
                    // audio sample as in the source.
                    XCTAssertEqual(try videoLead(out), try videoLead("\(base).\(input)"), accuracy: 0.002, what)
                }
            }
        }
    }

    func testBFramesKeptFromEveryContainer() throws { try checkEveryFrameKept(bFrames: nil) }
    func testNoBFramesKeptFromEveryContainer() throws { try checkEveryFrameKept(bFrames: 0) }

    /// Elementary H.264 and HEVC with B-frames (the encoders' defaults, as the README's `mux
    /// --video clip.h264 --audio clip.aac` example is made) have no timestamps at all: every frame
    /// is kept and shown in its order, with DTS increasing and PTS from the picture order counts.
    func testElementaryBFramesKeepEveryFrameInOrder() throws {
        try ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "3", "-c:a", "aac", "\(dir)/a.aac"])
        let cases: [(video: String, encoder: [String], outputs: [String])] = [
            ("v.h264", ["-c:v", "libx264"], ["flv", "asf"]),
            // FFmpeg 5.1 cannot read HEVC in FLV: ASF only, its decoder named (no ASF tag for HEVC).
            ("v.hevc", ["-c:v", "libx265", "-x265-params", "log-level=none"], ["asf"]),
        ]
        for c in cases {
            let video = "\(dir)/\(c.video)"
            try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "3"] + c.encoder + [video])
            let source = try videoHashes(video)
            XCTAssertEqual(source.count, 90, c.video)
            for output in c.outputs {
                let out = "\(video).\(output)", what = "\(c.video) → \(output)"
                let options = c.video.hasSuffix("hevc") ? ["-vcodec", "hevc"] : []
                let r = try Tools.livemux(["mux", "--video", video, "--audio", "\(dir)/a.aac", "-o", out])
                XCTAssertEqual(r.status, 0, "\(what): \(r.stderr)")
                XCTAssertFalse(r.stderr.contains("warning"), "\(what): \(r.stderr)")
                XCTAssertEqual(try videoHashes(out, inputOptions: options), source, "\(what): every frame, in order")
                XCTAssertEqual(try Tools.decodeErrors(out, inputOptions: options), "", what)
                let p = try Tools.probe(out, packets: true)
                let index = try XCTUnwrap(p.stream("video")).index
                let packets = (p.packets ?? []).filter { $0.stream_index == index }
                XCTAssertEqual(packets.count, 90, what)
                let dts = packets.compactMap(\.dts)
                XCTAssertEqual(zip(dts, dts.dropFirst()).filter { $0 >= $1 }.count, 0, "\(what): DTS strictly increase")
                if output == "flv" {
                    XCTAssertTrue(packets.contains { ($0.pts ?? 0) > ($0.dts ?? 0) }, "\(what): B-frames have composition offsets")
                    XCTAssertFalse(packets.contains { ($0.pts ?? 0) < ($0.dts ?? 0) }, "\(what): never shown before decoded")
                }
            }
        }
    }

    /// ADTS at 48 kHz followed by ADTS at 44.1 kHz: the second half cannot join the stream.
    func testDroppingMoreThanOnePercentFails() throws {
        for rate in [48000, 44100] {
            try ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(rate)", "-t", "1", "-c:a", "aac", "-f", "adts", "\(dir)/a\(rate).aac"])
        }
        let mixed = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/a48000.aac")) + Data(contentsOf: URL(fileURLWithPath: "\(dir)/a44100.aac"))
        try mixed.write(to: URL(fileURLWithPath: "\(dir)/mixed.aac"))

        let r = try Tools.livemux(["mux", "-q", "--audio", "\(dir)/mixed.aac", "-o", "\(dir)/out.flv"])
        XCTAssertEqual(r.status, 1, r.stderr)
        let lines = r.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("error: "), r.stderr)
        XCTAssertTrue(r.stderr.contains("audio packets"), r.stderr)
        XCTAssertTrue(r.stderr.contains("another sample rate"), r.stderr)
        XCTAssertTrue(r.stderr.contains("--allow-drops"), r.stderr)
        // What could be muxed is kept, and plays.
        let p = try Tools.probe("\(dir)/out.flv")
        XCTAssertEqual(p.stream("audio")?.sample_rate, "48000")
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/out.flv"), "")

        let allowed = try Tools.livemux(["mux", "-q", "--allow-drops", "--audio", "\(dir)/mixed.aac", "-o", "\(dir)/allowed.flv"])
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
    }
}
