import Foundation
import XCTest

/// `livemux mux` end to end: elementary streams and containers made by ffmpeg, muxed without
/// re-encoding, compared with `ffmpeg -c copy` of the same streams and read back independently.
final class MuxTests: TemporaryDirectoryTestCase {
    /// 2 s of 160x120 H.264 at 30 fps (keyframe every second) + 48 kHz mono AAC, as an MP4, an
    /// Annex B elementary stream and an ADTS file.
    func makeSources() throws {
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                    "-t", "2", "-c:v", "libx264", "-preset", "veryfast", "-bf", "0", "-g", "30", "-c:a", "aac", "-b:a", "64k", "\(dir)/src.mp4"])
        try ffmpeg(["-i", "\(dir)/src.mp4", "-an", "-c:v", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", "\(dir)/v.h264"])
        try ffmpeg(["-i", "\(dir)/src.mp4", "-vn", "-c:a", "copy", "-f", "adts", "\(dir)/a.aac"])
    }

    func ffmpeg(_ args: [String]) throws {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args)
        XCTAssertEqual(r.status, 0, "ffmpeg \(args.joined(separator: " ")): \(r.stderr)")
    }

    /// The decoded frames' hashes (`-f framemd5`, hash column only: timestamps may differ).
    func frameHashes(_ path: String, stream: String, inputOptions: [String] = []) throws -> [String] {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error"] + inputOptions + ["-i", path, "-map", "0:\(stream)", "-f", "framemd5", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func keyframeFlags(_ p: Probe, _ type: String) -> [Bool] {
        guard let s = p.stream(type) else { return [] }
        return (p.packets ?? []).filter { $0.stream_index == s.index }.map { $0.flags.hasPrefix("K") }
    }

    func compareWithFFmpegCopy(format: String) throws {
        try makeSources()
        let ours = "\(dir)/ours.\(format)", ref = "\(dir)/ref.\(format)"
        let r = try Tools.livemux(["mux", "-q", "--video", "\(dir)/v.h264", "--audio", "\(dir)/a.aac", "--fps", "30", "-o", ours])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "a quiet mux prints nothing")
        try ffmpeg(["-r", "30", "-i", "\(dir)/v.h264", "-i", "\(dir)/a.aac", "-c", "copy", ref])
        let a = try Tools.probe(ours, packets: true), b = try Tools.probe(ref, packets: true)
        for type in ["video", "audio"] {
            let x = try XCTUnwrap(a.stream(type)), y = try XCTUnwrap(b.stream(type))
            XCTAssertEqual(x.codec_name, y.codec_name, type)
            XCTAssertEqual(x.packetCount, y.packetCount, "\(type) packets")
            XCTAssertEqual(keyframeFlags(a, type), keyframeFlags(b, type), "\(type) keyframe flags")
        }
        let v = try XCTUnwrap(a.stream("video")), rv = try XCTUnwrap(b.stream("video"))
        XCTAssertEqual(v.width, 160)
        XCTAssertEqual(v.height, 120)
        XCTAssertEqual(v.extradata_size, rv.extradata_size, "video extradata")
        XCTAssertEqual(v.packetCount, 60)
        XCTAssertEqual(try XCTUnwrap(a.stream("audio")).extradata_size, 2, "AudioSpecificConfig")
        if format == "flv" {
            // ffmpeg inserts aac_adtstoasc for FLV (not for ASF, where it leaves ADTS in place).
            XCTAssertEqual(try XCTUnwrap(b.stream("audio")).extradata_size, 2)
        }
        XCTAssertEqual(try frameHashes(ours, stream: "v"), try frameHashes(ref, stream: "v"), "decoded video")
        XCTAssertEqual(try frameHashes(ours, stream: "a"), try frameHashes(ref, stream: "a"), "decoded audio")
        XCTAssertEqual(try frameHashes(ours, stream: "v").count, 60)
        XCTAssertEqual(try Tools.decodeErrors(ours), "")
        // Audio timing comes from the frame count: 1024 samples a frame at 48 kHz.
        let audioIndex = try XCTUnwrap(a.stream("audio")).index
        let dts = (a.packets ?? []).filter { $0.stream_index == audioIndex }.compactMap(\.dts)
        for (i, t) in dts.enumerated() {
            XCTAssertEqual(Double(t), (Double(i) * 1024 / 48).rounded(), accuracy: 1, "audio packet \(i) at its sample time")
        }
    }

    func testElementaryH264AndADTSIntoFLVMatchFFmpegCopy() throws { try compareWithFFmpegCopy(format: "flv") }
    func testElementaryH264AndADTSIntoASFMatchFFmpegCopy() throws { try compareWithFFmpegCopy(format: "asf") }

    func testElementaryHEVCIntoASFDecodesLikeTheStream() throws {
        let hevc = "\(dir)/v.hevc", out = "\(dir)/h.asf"
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "1", "-c:v", "libx265",
                    "-x265-params", "log-level=none:bframes=0:keyint=15", "-f", "hevc", hevc])
        let r = try Tools.livemux(["mux", "-q", "--video", hevc, "--fps", "30", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        // FFmpeg 5.1's ASF reader maps no HEVC tag (and ffmpeg -c copy cannot write one): decode forced.
        let p = try Tools.probe(out, packets: true)
        XCTAssertEqual(p.stream("video")?.codec_tag_string, "HEVC")
        XCTAssertEqual(p.stream("video")?.packetCount, 30)
        XCTAssertGreaterThan(p.stream("video")?.extradata_size ?? 0, 0)
        let src = try Tools.probe(hevc, packets: true)
        XCTAssertEqual(keyframeFlags(p, "video"), keyframeFlags(src, "video"))
        XCTAssertEqual(try frameHashes(out, stream: "v", inputOptions: ["-vcodec", "hevc"]), try frameHashes(hevc, stream: "v"))
        XCTAssertEqual(try Tools.decodeErrors(out, inputOptions: ["-vcodec", "hevc"]), "")
    }

    func testContainerInputToFLVOnStdout() throws {
        try makeSources()
        let out = "\(dir)/in.flv"
        let r = try Tools.livemux(["mux", "-q", "--input", "\(dir)/src.mp4", "-f", "flv", "-o", "-"], stdoutTo: out)
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try Tools.probe(out)
        XCTAssertEqual(p.stream("video")?.packetCount, 60)
        XCTAssertEqual(p.stream("audio")?.packetCount, try Tools.probe("\(dir)/src.mp4").stream("audio")?.packetCount)
        XCTAssertEqual(try frameHashes(out, stream: "v"), try frameHashes("\(dir)/src.mp4", stream: "v"))
        // The MP4's edit list hides the encoder's priming frame; FLV has none, so that frame decodes too.
        XCTAssertEqual(Array(try frameHashes(out, stream: "a").dropFirst()), try frameHashes("\(dir)/src.mp4", stream: "a"))
        XCTAssertEqual(try Tools.decodeErrors(out), "")
    }

    func testProgressLineBadInputAndHEVCInFLV() throws {
        try makeSources()
        let r = try Tools.livemux(["mux", "--video", "\(dir)/v.h264", "-o", "\(dir)/p.asf"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("packets=60 video=60 audio=0 "), r.stderr)
        let usage = try Tools.livemux(["mux", "--video", "\(dir)/v.h264"])
        XCTAssertEqual(usage.status, 64)
        XCTAssertTrue(usage.stderr.hasPrefix("error: no output"), usage.stderr)
        let missing = try Tools.livemux(["mux", "--video", "\(dir)/nope.h264", "-o", "\(dir)/x.asf"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("does not exist"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/x.asf"), "nothing created on bad input")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "0.2", "-c:v", "libx265",
                    "-x265-params", "log-level=none", "-f", "hevc", "\(dir)/v.hevc"])
        // FLV takes HEVC too (LiveMux's own tags): read back with PyAV, FFmpeg 5.1 cannot.
        let hevc = try Tools.livemux(["mux", "--video", "\(dir)/v.hevc", "-o", "\(dir)/h.flv"])
        XCTAssertEqual(hevc.status, 0, hevc.stderr)
        let read = try PyAV.read("\(dir)/h.flv")
        XCTAssertEqual(read.codec, "hevc")
        XCTAssertEqual(read.hashes.count, 6)
        XCTAssertEqual(read.errors, [])
    }

    /// Random bytes where video should be: a clear error or a clean run, never a crash.
    func testRandomBytesAsInput() throws {
        // Seeded and printed, so a failing input can be made again (LIVEMUX_FUZZ_SEED repeats one).
        let seed = ProcessInfo.processInfo.environment["LIVEMUX_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("random bytes as input: seed \(seed)")
        var generator = SplitMix(seed: seed)
        for name in ["r.h264", "r.hevc", "r.aac"] {
            let bytes = (0..<65536).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = FileManager.default.createFile(atPath: "\(dir)/\(name)", contents: Data(bytes))
            let option = name.hasSuffix(".aac") ? "--audio" : "--video"
            let r = try Tools.livemux(["mux", "-q", option, "\(dir)/\(name)", "-o", "\(dir)/\(name).asf"])
            XCTAssertTrue(r.status == 0 || r.status == 1, "\(name) (seed \(seed)): exit \(r.status) \(r.stderr)")
            if r.status == 1 {
                let lines = r.stderr.split(separator: "\n")
                XCTAssertEqual(lines.count, 1, "\(name) (seed \(seed)): \(r.stderr)")
                XCTAssertTrue(r.stderr.hasPrefix("error: "), "\(name) (seed \(seed)): \(r.stderr)")
            } else {
                XCTAssertEqual(try Tools.decodeErrors("\(dir)/\(name).asf"), "", "\(name) (seed \(seed))")
            }
        }
    }

    /// Examples/MuxFiles depends on LiveMux by path and uses only its public API.
    func testExamplePackageBuildsAndRuns() throws {
        try makeSources()
        let root = Tools.packageRoot.path
        // A fresh scratch directory (about 20 s of compiling): an incremental build of a path
        // dependency can miss source files LiveMux gained since (SwiftPM keeps a stale file list).
        let scratch = "\(dir)/example-build"
        let build = try Tools.run("/usr/bin/env", ["swift", "build", "--package-path", "\(root)/Examples/MuxFiles", "--scratch-path", scratch],
                                  timeout: 600)
        XCTAssertEqual(build.status, 0, build.stderr + build.stdoutText)
        let out = "\(dir)/example.flv"
        let r = try Tools.run("\(scratch)/debug/MuxFiles", ["\(dir)/v.h264", "\(dir)/a.aac", out, "30"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdoutText.contains("muxed 60 video"), r.stdoutText)
        XCTAssertEqual(try Tools.decodeErrors(out), "")
        XCTAssertEqual(try frameHashes(out, stream: "v"), try frameHashes("\(dir)/src.mp4", stream: "v"))
        XCTAssertEqual(try frameHashes(out, stream: "a"), try frameHashes("\(dir)/a.aac", stream: "a"))
    }

    /// Issue 42, item 11: docs/library.md showed `.package(path: "../livemux")`, which names the
    /// package by its directory, so `package: "LiveMux"` was not found in a directory of another
    /// name. The doc's own manifest (its first Swift block that imports PackageDescription) is
    /// built here, its path pointed at a copy of LiveMux in a directory named otherwise.
    func testLibraryDocManifestBuildsFromADirectoryWithAnotherName() throws {
        let doc = try String(contentsOf: Tools.packageRoot.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let blocks = doc.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        let manifest = try XCTUnwrap(blocks.first { $0.contains("import PackageDescription") }, "docs/library.md shows a Package.swift")
        let documentedPath = "\"../livemux\""
        XCTAssertTrue(manifest.contains(documentedPath), manifest)
        // Sources, tests and manifest: what SwiftPM reads of a package; the name is not livemux.
        let copy = "\(dir)/media-kit", app = "\(dir)/MyApp"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
        for part in ["Package.swift", "Sources", "Tests"] {
            try FileManager.default.copyItem(atPath: Tools.packageRoot.appendingPathComponent(part).path, toPath: "\(copy)/\(part)")
        }
        try FileManager.default.createDirectory(atPath: "\(app)/Sources/MyApp", withIntermediateDirectories: true)
        try manifest.replacingOccurrences(of: documentedPath, with: "\"../media-kit\"")
            .write(toFile: "\(app)/Package.swift", atomically: true, encoding: .utf8)
        try "import LiveMux\nprint(ContainerFormat.flv.rawValue)\n".write(toFile: "\(app)/Sources/MyApp/main.swift", atomically: true, encoding: .utf8)
        let build = try Tools.run("/usr/bin/env", ["swift", "build", "--package-path", app, "--scratch-path", "\(dir)/app-build"], timeout: 900)
        XCTAssertEqual(build.status, 0, build.stderr + build.stdoutText)
        let r = try Tools.run("\(dir)/app-build/debug/MyApp", [])
        XCTAssertEqual(r.stdoutText, "flv\n", r.stderr)
    }

    /// A reader that closes stdout early stops the mux with one clear line and exit 1.
    func testClosedStdoutStopsTheMux() throws {
        // Far more than a pipe holds (64 KiB), so the mux is still writing when `head` exits:
        // with a small file it could finish first, and then it rightly succeeds.
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
                    "-b:v", "8M", "-maxrate", "8M", "-bufsize", "1M", "\(dir)/big.mp4"])
        let script = "'\(Tools.livemux)' mux -q --input '\(dir)/big.mp4' -f flv -o - | head -c 1000 > /dev/null; exit ${PIPESTATUS[0]}"
        let r = try Tools.run("/bin/bash", ["-c", script])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderr, "error: stdout was closed by its reader; stopped muxing\n")
    }

    /// Length-prefixed input with a record: HEVC (hvcC) from MP4 into ASF, and H.264 with
    /// B-frames (pts ≠ dts) from MP4 into FLV. Decoded frames equal the source's.
    func testHVCCAndBFramesFromMP4() throws {
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "1", "-c:v", "libx265",
                    "-x265-params", "log-level=none:bframes=0:keyint=15", "-tag:v", "hvc1", "\(dir)/hevc.mp4"])
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "1", "-c:v", "libx264", "-bf", "2", "-g", "15", "\(dir)/bf.mp4"])
        let a = try Tools.livemux(["mux", "-q", "--input", "\(dir)/hevc.mp4", "-o", "\(dir)/hevc.asf"])
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(try frameHashes("\(dir)/hevc.asf", stream: "v", inputOptions: ["-vcodec", "hevc"]),
                       try frameHashes("\(dir)/hevc.mp4", stream: "v"))
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/hevc.asf", inputOptions: ["-vcodec", "hevc"]), "")
        let b = try Tools.livemux(["mux", "-q", "--input", "\(dir)/bf.mp4", "-o", "\(dir)/bf.flv"])
        XCTAssertEqual(b.status, 0, b.stderr)
        XCTAssertEqual(try frameHashes("\(dir)/bf.flv", stream: "v"), try frameHashes("\(dir)/bf.mp4", stream: "v"))
        XCTAssertEqual(try frameHashes("\(dir)/bf.flv", stream: "v").count, 30)
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/bf.flv"), "")
        let p = try Tools.probe("\(dir)/bf.flv", packets: true)
        XCTAssertTrue((p.packets ?? []).contains { $0.pts != $0.dts }, "B-frames keep their composition offsets")
    }
}
