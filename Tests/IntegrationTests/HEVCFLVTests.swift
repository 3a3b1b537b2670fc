import Foundation
import XCTest

/// HEVC in FLV (LiveMux's own FLV tags): Enhanced RTMP and codec id 12, to files, stdout, nginx-rtmp
/// and HTTP viewers, read back by PyAV's current FFmpeg and by a tag reader of the tests' own.
final class HEVCFLVTests: TemporaryDirectoryTestCase {
    /// 'hvc1' as a number: Enhanced RTMP's `videocodecid`.
    let hvc1 = Double(0x6876_6331)

    /// 2 s at 30 fps with a keyframe a second: 60 frames, 2 keyframes.
    let short = ["--vcodec", "hevc", "--size", "320x240", "-t", "2", "--gop", "1"]

    func testEnhancedFLVFileAndStdoutDecodeLikeTheSameEncodeInASF() throws {
        let r = try Tools.livemux(["record", "-q", "--no-realtime"] + short + ["-o", "\(dir)/e.flv", "-o", "\(dir)/e.asf", "-o", "-", "-f", "flv"],
                                  stdoutTo: "\(dir)/s.flv")
        XCTAssertEqual(r.status, 0, r.stderr)
        let asf = try PyAV.read("\(dir)/e.asf")
        XCTAssertEqual(asf.hashes.count, 60)
        for path in ["\(dir)/e.flv", "\(dir)/s.flv"] {
            let flv = try PyAV.read(path)
            check(flv, path)
            XCTAssertEqual(flv.hashes, asf.hashes, "\(path): decoded frames identical to the ASF's")
            try checkTags(path, mode: "enhanced", seekable: path.hasSuffix("e.flv"))
        }
        XCTAssertEqual(try PyAV.read("\(dir)/e.flv").duration ?? 0, 2, accuracy: 0.05, "onMetaData duration, updated by the trailer")
    }

    /// Codec id 12: PyAV's FFmpeg (8.x) decodes it; FFmpeg 5.1 knows no codec for id 12.
    func testCodec12FLVDecodesLikeTheSameEncodeInASF() throws {
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "--flv-hevc", "codec12"] + short
                                  + ["-o", "\(dir)/c.flv", "-o", "\(dir)/c.asf"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let flv = try PyAV.read("\(dir)/c.flv")
        check(flv, "c.flv")
        XCTAssertEqual(flv.hashes, try PyAV.read("\(dir)/c.asf").hashes, "decoded frames identical to the ASF's")
        try checkTags("\(dir)/c.flv", mode: "codec12", seekable: true)
        let old = try Tools.probe("\(dir)/c.flv")
        XCTAssertEqual(old.stream("video")?.codec_tag_string, "[12][0][0][0]", "FFmpeg 5.1 reads the id")
        XCTAssertNil(old.stream("video")?.codec_name, "but no codec for it (docs/architecture.md)")
    }

    /// `mux` of HEVC whose parameter sets change mid-stream (160x120, then 320x240): a second
    /// SequenceStart with the new hvcC, and every frame decodes at its own size.
    func testParameterSetChangeWritesANewSequenceStart() throws {
        var both = Data()
        var expected: [String] = []
        for size in ["160x120", "320x240"] {
            let path = "\(dir)/\(size).hevc"
            let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-t", "0.5",
                                             "-c:v", "libx265", "-x265-params", "log-level=none:bframes=0:keyint=15", "-f", "hevc", path])
            XCTAssertEqual(r.status, 0, r.stderr)
            both.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            expected += try PyAV.read(path).hashes
        }
        try both.write(to: URL(fileURLWithPath: "\(dir)/both.hevc"))
        let r = try Tools.livemux(["mux", "-q", "--video", "\(dir)/both.hevc", "--fps", "30", "-o", "\(dir)/m.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let read = try PyAV.read("\(dir)/m.flv")
        XCTAssertEqual(read.errors, [])
        XCTAssertEqual(read.sizes, Array(repeating: "160x120", count: 15) + Array(repeating: "320x240", count: 15))
        XCTAssertEqual(read.hashes, expected)
        let starts = try FLVFile(path: "\(dir)/m.flv").video.filter { $0.body.first == 0x90 }
        XCTAssertEqual(starts.map(\.timestamp), [0, 500], "a SequenceStart in the header and one at the new size")
        XCTAssertNotEqual(starts.first?.body, starts.last?.body)
    }

    /// B-frames (an MP4 through `mux --input`): frames with a composition time are CodedFrames
    /// with its SI24 (codec 12: always), the others CodedFramesX; decoded as the MP4 decodes.
    func testBFramesCarryTheirCompositionTime() throws {
        let mp4 = "\(dir)/b.mp4"
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "1",
                                         "-c:v", "libx265", "-x265-params", "log-level=none:bframes=3:keyint=15", mp4])
        XCTAssertEqual(r.status, 0, r.stderr)
        let expected = try PyAV.read(mp4).hashes
        XCTAssertEqual(expected.count, 30)
        for mode in ["enhanced", "codec12"] {
            let out = "\(dir)/b-\(mode).flv"
            let m = try Tools.livemux(["mux", "-q", "--input", mp4, "--flv-hevc", mode, "-o", out])
            XCTAssertEqual(m.status, 0, m.stderr)
            let read = try PyAV.read(out)
            XCTAssertEqual(read.errors, [], mode)
            XCTAssertEqual(read.hashes, expected, mode)
            let coded = try FLVFile(path: out).video.filter { $0.body.first.map { $0 & 0x0F } == (mode == "enhanced" ? 1 : 12) }
            let cts = coded.compactMap { tag -> Int? in
                let at = mode == "enhanced" ? 5 : 2
                guard tag.body.count > at + 3, mode == "enhanced" || tag.body[1] == 1 else { return nil }
                return tag.body[at..<(at + 3)].reduce(0) { $0 << 8 | Int($1) }
            }
            XCTAssertGreaterThan(cts.filter { $0 > 0 }.count, 10, "\(mode): B-frames reorder, so most frames have a composition time")
        }
    }

    /// nginx-rtmp (`record all`) keeps codec-12 HEVC whole. Enhanced RTMP it does not pass on:
    /// it reads the frame type from the high nibble, which the IsExHeader bit makes 9 or 10, so
    /// no video tag is ever a keyframe to it and its recording has audio only (nginx-rtmp 1.2.2,
    /// Debian 12). If this starts failing, nginx learned Enhanced RTMP: update the docs.
    func testPushThroughNginxRTMP() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let server = try RTMPServer(directory: dir)
        try server.start()
        defer { server.stop() }
        for mode in ["codec12", "enhanced"] {
            let r = try Tools.livemux(["record", "-q", "--flv-hevc", mode] + short
                                      + ["-o", "rtmp://127.0.0.1:\(server.port)/live/\(mode)", "-o", "\(dir)/\(mode).flv"], timeout: 30)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        server.stop()  // finishes the recordings
        let files = try server.recordedFiles()
        let codec12 = try PyAV.read(try XCTUnwrap(files.first { $0.contains("/codec12") }))
        XCTAssertEqual(codec12.codec, "hevc")
        XCTAssertEqual(codec12.errors, [])
        XCTAssertEqual(codec12.hashes, try PyAV.read("\(dir)/codec12.flv").hashes, "every frame went through nginx")
        let enhanced = try PyAV.read(try XCTUnwrap(files.first { $0.contains("/enhanced") }))
        XCTAssertNil(enhanced.codec, "nginx-rtmp 1.2.2 drops Enhanced RTMP video")
        XCTAssertEqual(enhanced.audio, "aac")
    }

    /// A file of HEVC as Enhanced FLV plays in FFmpeg 6.1 and later, not in Debian 12's ffprobe,
    /// which reads its video as flashsv: said once at start, naming codec12 (issue 52, item 12);
    /// codec12 itself, and an FLV of H.264, say nothing.
    func testEnhancedFLVFileWarnsAtStart() throws {
        func warnings(_ r: Tools.Result) -> [Substring] { r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") } }
        let file = "\(dir)/enhanced.flv"
        let r = try Tools.livemux(["record", "--vcodec", "hevc", "--size", "160x120", "-t", "0.5", "-o", file])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(warnings(r), ["warning: \(file) gets HEVC as Enhanced FLV (FourCC hvc1), which FFmpeg before 6.1 (Debian 12's ffprobe"
                                     + " and ffplay) reads as flashsv and cannot play; --flv-hevc codec12 writes what FFmpeg 5.1 plays"], r.stderr)
        XCTAssertEqual(try PyAV.read(file).codec, "hevc", "FFmpeg 8 reads it")
        for extra in [["--vcodec", "hevc", "--flv-hevc", "codec12"], []] {
            let quiet = try Tools.livemux(["record", "--size", "160x120", "-t", "0.5", "-y", "-o", "\(dir)/other.flv"] + extra)
            XCTAssertEqual(quiet.status, 0, quiet.stderr)
            XCTAssertEqual(warnings(quiet), [], "\(extra): \(quiet.stderr)")
        }
    }

    /// As the test above shows, nginx-rtmp keeps only the audio of Enhanced RTMP, and FFmpeg 5.1's
    /// RTMP client cannot ask a server what it takes: an rtmp:// output with HEVC as Enhanced RTMP
    /// warns once, at start (no server needed), naming codec12 (issue 32, item 8). The bit-rate
    /// warning that run also gives had a doubled "warning: warning:" prefix.
    func testEnhancedRTMPOutputWarnsAtStart() throws {
        let url = "rtmp://127.0.0.1:1/app/k"
        func warnings(_ r: Tools.Result) -> [Substring] { r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") } }
        let r = try Tools.livemux(["record", "--vcodec", "hevc", "--size", "160x120", "-t", "1", "--reconnect-attempts", "0", "-o", url], timeout: 30)
        XCTAssertEqual(r.status, 1, "nothing listens on port 1: \(r.stderr)")
        let enhanced = warnings(r).filter { $0.contains("Enhanced RTMP") }
        XCTAssertEqual(enhanced, ["warning: rtmp://127.0.0.1:1/app/**** gets HEVC as Enhanced RTMP: a server without Enhanced RTMP"
                                  + " (nginx-rtmp) drops the video and keeps only the audio; --flv-hevc codec12 is what such servers relay"], r.stderr)
        XCTAssertEqual(warnings(r).filter { $0.hasPrefix("warning: HEVC's bit rate cannot follow the network") }.count, 1, r.stderr)
        XCTAssertFalse(r.stderr.contains("warning: warning:"), r.stderr)
        let codec12 = try Tools.livemux(["record", "--vcodec", "hevc", "--flv-hevc", "codec12", "--size", "160x120", "-t", "1",
                                         "--reconnect-attempts", "0", "-o", url], timeout: 30)
        XCTAssertEqual(warnings(codec12).filter { $0.contains("Enhanced RTMP") }, [], codec12.stderr)
        // mux learns the codec from its input: the same warning.
        let clip = "\(dir)/clip.hevc"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "0.3",
                                            "-c:v", "libx265", "-x265-params", "log-level=none", clip])
        XCTAssertEqual(made.status, 0, made.stderr)
        let mux = try Tools.livemux(["mux", "--video", clip, "--fps", "30", "--reconnect-attempts", "0", "-o", url], timeout: 30)
        XCTAssertEqual(warnings(mux).filter { $0.contains("Enhanced RTMP") }.count, 1, mux.stderr)
    }

    /// `serve`: a viewer joining /live.flv mid-stream gets Enhanced FLV from a keyframe on.
    func testServeLiveFLVWithHEVC() throws {
        let port = try Network.freePort()
        var viewer: ChildProcess?
        let fetch = "import shutil, sys, urllib.request; shutil.copyfileobj(urllib.request.urlopen(sys.argv[1]), open(sys.argv[2], 'wb'))"
        let r = try Tools.livemux(["serve", "-q", "--listen", "127.0.0.1:\(port)", "--vcodec", "hevc", "--size", "320x240", "--gop", "1",
                                   "-t", "3"], timeout: 30) { _ in
            waitUntil(deadline: 5) { Network.canConnect(port: port) }
            usleep(1_300_000)  // the viewer joins mid-stream, as asserted: past the first keyframes, 1.7 s before the end
            viewer = try? ChildProcess.background("python3", ["-c", fetch, "http://127.0.0.1:\(port)/live.flv", "\(self.dir)/viewer.flv"],
                                     directory: self.dir, name: "viewer")
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let v = try XCTUnwrap(viewer)
        XCTAssertEqual(v.finish(within: 10), 0, v.stderrFile)
        let read = try PyAV.read("\(dir)/viewer.flv")
        XCTAssertEqual(read.codec, "hevc")
        XCTAssertEqual(read.errors, [])
        XCTAssertEqual(read.hashes.count, read.packets, "every packet from the first keyframe on decodes")
        XCTAssertGreaterThanOrEqual(read.packets, 30)
        XCTAssertLessThan(read.packets, 90, "the viewer joined mid-stream")
        XCTAssertEqual(try FLVFile(path: "\(dir)/viewer.flv").video.dropFirst().first?.body.first, 0x93, "starts at a keyframe")
    }

    /// `--flv-hevc` concerns HEVC only: with H.264 it is accepted and changes nothing.
    func testFLVHEVCOptionIsIgnoredForH264() throws {
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "--flv-hevc", "codec12", "--size", "160x120", "-t", "1", "-o", "\(dir)/h.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        XCTAssertEqual(try Tools.probe("\(dir)/h.flv").stream("video")?.codec_name, "h264")
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/h.flv"), "")
    }

    func check(_ r: PyAV.Reading, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.codec, "hevc", name, file: file, line: line)
        XCTAssertEqual(r.audio, "aac", name, file: file, line: line)
        XCTAssertEqual(r.width, 320, name, file: file, line: line)
        XCTAssertEqual(r.height, 240, name, file: file, line: line)
        XCTAssertEqual(r.packets, 60, name, file: file, line: line)
        XCTAssertEqual(r.hashes.count, 60, name, file: file, line: line)
        XCTAssertEqual(r.keyframes, 2, name, file: file, line: line)
        XCTAssertEqual(r.errors, [], name, file: file, line: line)
    }

    /// The tags against the convention: Enhanced RTMP v1 (IsExHeader, frame type, packet type,
    /// FourCC) or codec id 12 laid out as AVC; length-prefixed NAL units; onMetaData.
    func checkTags(_ path: String, mode: String, seekable: Bool) throws {
        let flv = try FLVFile(path: path)
        XCTAssertEqual(flv.flags, 5, "audio and video")
        let script = try XCTUnwrap(flv.tags.first)
        XCTAssertEqual(script.type, 18)
        XCTAssertEqual(amfNumber("videocodecid", in: script.body), mode == "enhanced" ? hvc1 : 12)
        XCTAssertEqual(amfNumber("width", in: script.body), 320)
        XCTAssertEqual(amfNumber("filesize", in: script.body), seekable ? Double(try fileSize(path)) : nil)
        let video = flv.video
        let (first, last) = (try XCTUnwrap(video.first), try XCTUnwrap(video.last))
        let frames = video.dropFirst().dropLast()
        XCTAssertEqual(frames.count, 60)
        if mode == "enhanced" {
            let fourCC = Array("hvc1".utf8)
            XCTAssertEqual(Array(first.body.prefix(5)), [0x90] + fourCC, "key frame, SequenceStart")
            XCTAssertEqual(first.body[5], 1, "hvcC configurationVersion")
            XCTAssertEqual(last.body, [0x92] + fourCC, "SequenceEnd")
            // No B-frames: composition time 0 everywhere, so CodedFramesX (3), key (0x90) or inter (0xA0).
            XCTAssertEqual(frames.filter { $0.body.first == 0x93 }.count, 2)
            XCTAssertEqual(frames.filter { $0.body.first == 0xA3 }.count, 58)
            for f in frames {
                XCTAssertEqual(Array(f.body[1..<5]), fourCC)
                XCTAssertTrue(FLVFile.isLengthPrefixed(f.body[5...]), "NAL units with 4-byte lengths")
            }
        } else {
            XCTAssertEqual(Array(first.body.prefix(5)), [0x1C, 0, 0, 0, 0], "key frame, codec 12, sequence header, cts 0")
            XCTAssertEqual(first.body[5], 1, "hvcC configurationVersion")
            XCTAssertEqual(last.body, [0x1C, 2, 0, 0, 0], "end of sequence")
            XCTAssertEqual(frames.filter { $0.body.first == 0x1C }.count, 2)
            XCTAssertEqual(frames.filter { $0.body.first == 0x2C }.count, 58)
            for f in frames {
                XCTAssertEqual(Array(f.body[1..<5]), [1, 0, 0, 0], "NAL units, composition time 0")
                XCTAssertTrue(FLVFile.isLengthPrefixed(f.body[5...]), "NAL units with 4-byte lengths")
            }
        }
        XCTAssertEqual(last.timestamp, frames.last?.timestamp, "the end at the last frame's time")
    }

    /// An AMF0 number that follows `name` in onMetaData; nil when the name is absent.
    func amfNumber(_ name: String, in body: [UInt8]) -> Double? {
        let key = [UInt8(0), UInt8(name.utf8.count)] + Array(name.utf8) + [0]
        guard let at = body.firstRange(of: key)?.upperBound, at + 8 <= body.count else { return nil }
        return Double(bitPattern: body[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) })
    }

    func fileSize(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }
}
