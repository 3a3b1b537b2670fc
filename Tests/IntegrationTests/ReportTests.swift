import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `livemux report` on recordings LiveMux made, and on files with a deliberately bad interleave.
final class ReportTests: TemporaryDirectoryTestCase {
    func report(_ path: String, svg: String? = nil) throws -> Tools.Result {
        try Tools.livemux(["report", path] + (svg.map { ["--svg", $0] } ?? []))
    }

    func testGoodLivemuxFilesReportNoProblem() throws {
        for format in ["asf", "flv"] {
            let path = "\(dir)/good.\(format)", svg = "\(dir)/good-\(format).svg"
            let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "3", "--size", "160x120", "-o", path])
            XCTAssertEqual(r.status, 0, r.stderr)
            let out = try report(path, svg: svg)
            XCTAssertEqual(out.status, 0, out.stderr)
            let text = out.stdoutText
            XCTAssertTrue(text.contains("interleaving: good"), text)
            XCTAssertTrue(text.contains("no inversions"), text)
            XCTAssertTrue(text.contains("video h264 160x120, 90 packets"), text)
            let p = try Tools.probe(path)
            let audioPackets = try XCTUnwrap(p.stream("audio")).packetCount
            XCTAssertTrue(text.contains("audio aac 48000 Hz 2 ch, \(audioPackets) packets"), text)
            XCTAssertTrue(text.contains("GOP: 2 keyframes, every 2.000 s = 60 frames; starts with a keyframe"), text)
            XCTAssertTrue(text.contains("(\(format), "), text)
            // The SVG is well-formed XML with one marker per keyframe.
            let data = try Data(contentsOf: URL(fileURLWithPath: svg))
            XCTAssertTrue(XMLParser(data: data).parse(), "well-formed SVG")
            let svgText = String(decoding: data, as: UTF8.self)
            XCTAssertEqual(svgText.components(separatedBy: "class=\"keyframe\"").count - 1, 2)
            XCTAssertEqual(svgText.components(separatedBy: "class=\"inversion\"").count - 1, 0)
        }
    }

    /// An FLV made by ffmpeg (well interleaved: the control), then the same tags with every audio
    /// tag moved 2 s later in the file: a player reading it front to back must buffer 2 s.
    func testBadInterleaveIsFlagged() throws {
        let good = "\(dir)/ffmpeg.flv", bad = "\(dir)/bad.flv", svg = "\(dir)/bad.svg"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30",
                                            "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "4",
                                            "-c:v", "libx264", "-bf", "0", "-g", "30", "-c:a", "aac", good])
        XCTAssertEqual(made.status, 0, made.stderr)
        let control = try report(good)
        XCTAssertTrue(control.stdoutText.contains("interleaving: good"), control.stdoutText)

        try Data(FLVTags.delayAudio(in: [UInt8](Data(contentsOf: URL(fileURLWithPath: good))), byMilliseconds: 2000))
            .write(to: URL(fileURLWithPath: bad))
        XCTAssertEqual(try Tools.probe(bad).streams.map(\.packetCount), try Tools.probe(good).streams.map(\.packetCount),
                       "the bad file holds every packet and reads back")
        let out = try report(bad, svg: svg)
        XCTAssertEqual(out.status, 0, out.stderr)
        let text = out.stdoutText
        XCTAssertTrue(text.contains("interleaving: BAD"), text)
        let match = try XCTUnwrap(text.range(of: #"(\d+) inversions"#, options: .regularExpression), text)
        XCTAssertGreaterThan(Int(text[match].split(separator: " ")[0]) ?? 0, 50, text)
        let distance = try XCTUnwrap(text.range(of: #"file order \d+\.\d+ s"#, options: .regularExpression))
        let seconds = Double(text[distance].split(separator: " ")[2]) ?? 0
        XCTAssertEqual(seconds, 2.0, accuracy: 0.1, text)
        let svgText = try String(contentsOfFile: svg, encoding: .utf8)
        XCTAssertTrue(svgText.contains("interleaving: BAD"))
        XCTAssertGreaterThan(svgText.components(separatedBy: "class=\"inversion\"").count - 1, 50)
    }

    /// HEVC in FLV, both ways LiveMux writes it, which FFmpeg 5.1's FLV reader cannot take apart
    /// (Enhanced: `flashsv`, 1 packet; codec 12: no codec, the end-of-sequence tag counted as a
    /// packet and an inversion). LiveMux's own tag reader must find what FFmpeg finds in the ASF
    /// written from the same encode: the same stream lines, GOP, and a good interleave.
    func testHEVCInFLVReadsLikeTheSameEncodeInASF() throws {
        for (mode, signalling) in [("enhanced", "FourCC hvc1"), ("codec12", "FLV codec id 12")] {
            let flv = "\(dir)/\(mode).flv", asf = "\(dir)/\(mode).asf"
            let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "3", "--size", "160x120", "--vcodec", "hevc",
                                       "--flv-hevc", mode, "-o", flv, "-o", asf])
            XCTAssertEqual(r.status, 0, r.stderr)
            let flvOut = try report(flv), asfOut = try report(asf)
            XCTAssertEqual(flvOut.status, 0, flvOut.stderr)
            let text = flvOut.stdoutText
            XCTAssertTrue(text.contains("video hevc (\(signalling)) 160x120, 90 packets"), text)
            XCTAssertTrue(text.contains("GOP: 2 keyframes, every 2.000 s = 60 frames; starts with a keyframe"), text)
            XCTAssertTrue(text.contains("interleaving: good"), text)
            XCTAssertTrue(text.contains("no inversions"), text)
            func summary(_ t: String) -> [String] {
                t.split(separator: "\n").filter { $0.hasPrefix("stream ") || $0.hasPrefix("GOP:") }
                    .map { $0.replacingOccurrences(of: " (\(signalling))", with: "").replacingOccurrences(of: " (FourCC HEVC)", with: "") }
            }
            XCTAssertEqual(summary(text), summary(asfOut.stdoutText), "\(text)\n---\n\(asfOut.stdoutText)")
        }
        // Cut off in the middle, as a recording whose writer was killed: what is whole is read, and the cut is told.
        let whole = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/enhanced.flv")), cut = "\(dir)/cut.flv"
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
        let out = try report(cut)
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertTrue(out.stdoutText.contains("cut off: the file ends inside the tag at byte"), out.stdoutText)
        XCTAssertTrue(out.stdoutText.contains("video hevc (FourCC hvc1) 160x120"), out.stdoutText)
    }

    /// What the tag reader cannot read is one error line, not numbers: HEVC FLV whose audio tags
    /// say MP3 (SoundFormat 2) instead of AAC.
    func testUnreadableHEVCFLVIsOneErrorLine() throws {
        let flv = "\(dir)/hevc.flv", mp3 = "\(dir)/mp3.flv"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "1", "--size", "160x120", "--vcodec", "hevc", "-o", flv])
        XCTAssertEqual(r.status, 0, r.stderr)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: flv)))
        var offset = 13, audioTags = 0
        while offset + 11 < bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if bytes[offset] == 8 {
                bytes[offset + 11] = 0x2F  // SoundFormat 2 (MP3), 44 kHz, 16-bit, stereo
                audioTags += 1
            }
            offset += 11 + size + 4
        }
        XCTAssertGreaterThan(audioTags, 1)
        try Data(bytes).write(to: URL(fileURLWithPath: mp3))
        let out = try report(mp3)
        XCTAssertEqual(out.status, 1)
        XCTAssertEqual(out.stdoutText, "")
        XCTAssertEqual(out.stderr.split(separator: "\n").count, 1, out.stderr)
        XCTAssertTrue(out.stderr.hasPrefix("error: cannot read '\(mp3)': its audio is FLV SoundFormat 2"), out.stderr)
    }

    /// HEVC in ASF: FFmpeg 5.1's ASF reader maps no FourCC to HEVC, so the codec is named by the
    /// stream's tag ('HEVC', as LiveMux writes it).
    func testHEVCInASFIsNamedByItsFourCC() throws {
        let path = "\(dir)/hevc.asf"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "3", "--size", "160x120", "--vcodec", "hevc", "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = try report(path)
        XCTAssertEqual(out.status, 0, out.stderr)
        let text = out.stdoutText
        XCTAssertTrue(text.contains("video hevc (FourCC HEVC) 160x120, 90 packets"), text)
        XCTAssertTrue(text.contains("GOP: 2 keyframes, every 2.000 s = 60 frames; starts with a keyframe"), text)
        XCTAssertTrue(text.contains("interleaving: good"), text)
    }

    /// Elementary H.264 and HEVC carry no timestamps: their frames are timed, in decoding order, at
    /// the rate the parameter sets state (25 fps here), as `livemux mux` times them.
    func testElementaryVideoIsTimedAtItsStatedRate() throws {
        for (codec, file) in [("libx264", "x.h264"), ("libx265", "x.h265")] {
            let path = "\(dir)/\(file)"
            let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2",
                                                "-c:v", codec, "-g", "25", "-bf", "0", "-x265-params", "log-level=error", path])
            XCTAssertEqual(made.status, 0, made.stderr)
            let out = try report(path)
            XCTAssertEqual(out.status, 0, out.stderr)
            let text = out.stdoutText
            XCTAssertTrue(text.contains("video \(codec == "libx264" ? "h264" : "hevc") 160x120, 50 packets"), text)
            XCTAssertTrue(text.contains("25.00 frames/s"), text)
            XCTAssertTrue(text.contains("GOP: 2 keyframes, every 1.000 s = 25 frames; starts with a keyframe"), text)
            XCTAssertTrue(text.contains("no timestamps: its frames are timed in decoding order at 25 fps, the rate its parameter sets state"), text)
        }
    }

    /// An ordinary MP4 from ffmpeg: video in 1/15360, audio in 1/48000. At 1.6 s and 3.2 s an audio
    /// packet follows video of exactly the same time, which is no inversion.
    func testOrdinaryMP4IsWellInterleaved() throws {
        let mp4 = "\(dir)/ffmpeg.mp4"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=4",
                                            "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=4",
                                            "-c:v", "libx264", "-c:a", "aac", "-shortest", mp4])
        XCTAssertEqual(made.status, 0, made.stderr)
        let out = try report(mp4)
        XCTAssertEqual(out.status, 0, out.stderr)
        let text = out.stdoutText
        XCTAssertTrue(text.contains("interleaving: good"), text)
        XCTAssertTrue(text.contains("no inversions"), text)
        XCTAssertTrue(text.contains("video h264 160x120, 120 packets"), text)
    }

    /// An FLV whose writer left onMetaData out (nginx-rtmp's recordings, ffmpeg's no_metadata) is
    /// not said to be cut off: every tag is whole (issue 52, item 12).
    func testFLVWithoutMetadataIsNotCalledCutOff() throws {
        let flv = "\(dir)/nometa.flv"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1",
                                            "-c:v", "libx264", "-flvflags", "no_metadata", flv])
        XCTAssertEqual(made.status, 0, made.stderr)
        let text = try report(flv).stdoutText
        XCTAssertTrue(text.contains("finalised: NO (no onMetaData, so no duration): every tag is whole, but its writer left onMetaData out"), text)
        XCTAssertFalse(text.contains("cut off"), text)
    }

    /// An ordinary ffmpeg MKV with B-frames: Matroska stores no DTS, and the demuxer gives the
    /// first packets none (the delay is not known yet). Judged by the DTS there is, it is well
    /// interleaved at exactly 25 fps; placed by their PTS, those packets read as an inversion and
    /// stretched the rate to 25.52.
    func testMKVWithBFramesIsJudgedByItsDTS() throws {
        let mkv = "\(dir)/bframes.mkv"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                            "-f", "lavfi", "-i", "sine", "-t", "4", "-c:v", "libx264", "-bf", "2", "-c:a", "aac", mkv])
        XCTAssertEqual(made.status, 0, made.stderr)
        let out = try report(mkv)
        XCTAssertEqual(out.status, 0, out.stderr)
        let text = out.stdoutText
        XCTAssertTrue(text.contains("video h264 320x240, 100 packets"), text)
        XCTAssertTrue(text.contains(", 25.00 frames/s"), text)
        XCTAssertTrue(text.contains("interleaving: good"), text)
        XCTAssertTrue(text.contains("no inversions"), text)
        XCTAssertTrue(text.contains("carry no DTS"), "says which packets it left out: \(text)")
    }

    /// A picture is not a recording, though libavformat opens an SVG (image2) as one frame of video.
    func testSVGIsRefused() throws {
        let svg = "\(dir)/picture.svg"
        try Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>"#.utf8)
            .write(to: URL(fileURLWithPath: svg))
        let out = try report(svg)
        XCTAssertEqual(out.status, 1)
        XCTAssertEqual(out.stdoutText, "")
        XCTAssertEqual(out.stderr.split(separator: "\n").count, 1, out.stderr)
        XCTAssertTrue(out.stderr.hasPrefix("error: '\(svg)' is an image (image2), not a recording"), out.stderr)
    }

    func testErrors() throws {
        let missing = try report("\(dir)/none.asf")
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.hasPrefix("error: no such file"), missing.stderr)
        let junk = "\(dir)/junk.asf"
        try Data("not a recording".utf8).write(to: URL(fileURLWithPath: junk))
        let unreadable = try report(junk)
        XCTAssertEqual(unreadable.status, 1)
        XCTAssertTrue(unreadable.stderr.hasPrefix("error: cannot read"), unreadable.stderr)
        XCTAssertEqual(try Tools.livemux(["report"]).status, 64)
        XCTAssertEqual(try Tools.livemux(["report", junk, "--bogus"]).status, 64)
    }
}

/// Rearranges the tags of an FLV file (each tag moves with the PreviousTagSize after it, so the
/// file stays valid).
enum FLVTags {
    static func delayAudio(in flv: [UInt8], byMilliseconds delay: Int) -> [UInt8] {
        var offset = 13
        var leading: [ArraySlice<UInt8>] = []
        var media: [(time: Int, order: Int, bytes: ArraySlice<UInt8>)] = []
        while offset + 11 <= flv.count {
            let size = Int(flv[offset + 1]) << 16 | Int(flv[offset + 2]) << 8 | Int(flv[offset + 3])
            let end = offset + 11 + size + 4
            guard end <= flv.count else { break }
            let type = flv[offset]
            let ts = Int(flv[offset + 7]) << 24 | Int(flv[offset + 4]) << 16 | Int(flv[offset + 5]) << 8 | Int(flv[offset + 6])
            let tag = flv[offset..<end]
            if (type == 8 || type == 9) && size > 1 && flv[offset + 12] == 1 {
                media.append((type == 8 ? ts + delay : ts, media.count, tag))
            } else if media.isEmpty {
                leading.append(tag)  // metadata and sequence headers stay in front
            } else {
                media.append((Int.max, media.count, tag))  // end of sequence stays last
            }
            offset = end
        }
        var out = Array(flv[0..<13])
        for t in leading { out += t }
        for t in media.sorted(by: { ($0.time, $0.order) < ($1.time, $1.order) }) { out += t.bytes }
        return out
    }
}
