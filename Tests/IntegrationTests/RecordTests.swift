import Foundation
import XCTest

/// `livemux record` end to end: real encoders, real muxers, read back with ffprobe, ffmpeg and ffplay.
final class RecordTests: TemporaryDirectoryTestCase {
    struct Expected {
        var vcodec = "h264"
        var width = 320
        var height = 240
        var fps = 30
        var sampleRate = 48000
        var channels = 2
        var seconds = 3.0
        var decodeOptions: [String] = []
    }

    /// Records with the given options and checks everything ffprobe and a decode can tell.
    func record(_ name: String, _ e: Expected, extra: [String] = []) throws -> String {
        let path = "\(dir)/\(name)"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", String(e.seconds),
                                   "--size", "\(e.width)x\(e.height)", "--fps", String(e.fps),
                                   "--vcodec", e.vcodec, "--sample-rate", String(e.sampleRate),
                                   "--channels", String(e.channels), "-o", path] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "a quiet recording prints nothing")
        try check(path, e)
        return path
    }

    func check(_ path: String, _ e: Expected, exactDuration: Bool = true) throws {
        let p = try Tools.probe(path, packets: true)
        let v = try XCTUnwrap(p.stream("video"))
        let a = try XCTUnwrap(p.stream("audio"))
        if e.vcodec == "hevc" {
            // FFmpeg 5.1's ASF reader maps no HEVC tag, so ffprobe names no codec; the tag is checked.
            XCTAssertEqual(v.codec_tag_string, "HEVC")
        } else {
            XCTAssertEqual(v.codec_name, e.vcodec)
            XCTAssertNotNil(v.profile)
            XCTAssertEqual(v.r_frame_rate, "\(e.fps)/1")
        }
        XCTAssertEqual(v.width, e.width)
        XCTAssertEqual(v.height, e.height)
        XCTAssertGreaterThan(v.extradata_size ?? 0, 0, "video extradata")
        XCTAssertEqual(a.codec_name, "aac")
        XCTAssertEqual(a.profile, "LC")
        XCTAssertEqual(a.sample_rate, String(e.sampleRate))
        XCTAssertEqual(a.channels, e.channels)
        XCTAssertGreaterThan(a.extradata_size ?? 0, 0, "audio extradata")
        let frames = Int((Double(e.fps) * e.seconds).rounded())
        let aacFrames = Int((Double(e.sampleRate) * e.seconds / 1024).rounded(.up))
        XCTAssertEqual(Double(v.packetCount), Double(frames), accuracy: 1, "video packets")
        XCTAssertEqual(Double(a.packetCount), Double(aacFrames), accuracy: 2, "AAC frames")
        if exactDuration {
            XCTAssertEqual(try XCTUnwrap(p.format.seconds), e.seconds, accuracy: 0.1, "format duration")
        }
        // DTS strictly increase per stream.
        for s in [v.index, a.index] {
            let dts = (p.packets ?? []).filter { $0.stream_index == s }.compactMap(\.dts)
            XCTAssertFalse(dts.isEmpty)
            XCTAssertEqual(zip(dts, dts.dropFirst()).filter { $0 >= $1 }.count, 0, "DTS of stream \(s) strictly increase")
        }
        XCTAssertEqual(try Tools.decodeErrors(path, inputOptions: e.decodeOptions), "", "decodes without errors")
    }

    func testH264AACInASFStereo48k() throws {
        _ = try record("a.asf", Expected())
    }

    func testH264AACInFLVMono44k720p() throws {
        _ = try record("b.flv", Expected(width: 1280, height: 720, sampleRate: 44100, channels: 1))
    }

    func testH264AACInASFMono44k720p() throws {
        _ = try record("c.asf", Expected(width: 1280, height: 720, sampleRate: 44100, channels: 1))
    }

    func testH264AACInFLVStereo48k() throws {
        _ = try record("d.flv", Expected())
    }

    func testHEVCInASF() throws {
        // FFmpeg 5.1's ASF reader maps no HEVC tag: decode with the codec forced.
        let path = try record("e.asf", Expected(vcodec: "hevc", decodeOptions: ["-vcodec", "hevc"]))
        let p = try Tools.probe(path)
        XCTAssertEqual(p.stream("video")?.codec_tag_string, "HEVC", "a fourcc players map")
    }

    func testCodecFromExtensionAndFormatFlag() throws {
        let path = "\(dir)/noext"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "1", "--size", "160x120", "-o", path, "-f", "flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.probe(path).format.format_name, "flv")
    }

    /// `-o -` is a valid non-seekable stream: the same codecs and packet counts as a file.
    func testStandardOutputASFAndFLV() throws {
        for format in ["asf", "flv"] {
            let path = "\(dir)/stdout.\(format)"
            let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "3", "--size", "320x240", "-f", format, "-o", "-"],
                                      stdoutTo: path)
            XCTAssertEqual(r.status, 0, r.stderr)
            try check(path, Expected(), exactDuration: false)
            // Piped straight into ffprobe, the same.
            let piped = try Tools.run("/bin/sh", ["-c", "'\(Tools.livemux)' record --no-realtime -q -t 3 --size 320x240 -f \(format) -o - | ffprobe -v error -of json -count_packets -show_streams -show_format -"])
            XCTAssertEqual(piped.status, 0, piped.stderr)
            let probe = try JSONDecoder().decode(Probe.self, from: piped.stdout)
            XCTAssertEqual(probe.stream("video")?.packetCount, 90)
            XCTAssertEqual(Double(probe.stream("audio")?.packetCount ?? 0), 141, accuracy: 2)
        }
    }

    /// The FLV starts with an avcC that matches the first keyframe's SPS/PPS, and an
    /// AudioSpecificConfig that names the real rate and channel count.
    func testFLVSequenceHeaders() throws {
        for (rate, channels) in [(44100, 1), (48000, 2), (22050, 2)] {
            let path = "\(dir)/seq-\(rate)-\(channels).flv"
            let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "1", "--size", "160x120",
                                       "--sample-rate", String(rate), "--channels", String(channels), "-o", path])
            XCTAssertEqual(r.status, 0, r.stderr)
            let tags = try FLVReader.tags(Data(contentsOf: URL(fileURLWithPath: path)))
            let videoHeader = try XCTUnwrap(tags.first { $0.type == 9 }, "first video tag")
            XCTAssertEqual(Array(videoHeader.data.prefix(2)), [0x17, 0x00], "the first video tag is an AVC sequence header")
            let avcC = try XCTUnwrap(FLVReader.parameterSets(avcC: Array(videoHeader.data.dropFirst(5))))
            let keyframe = try XCTUnwrap(tags.first { $0.type == 9 && $0.data.count > 5 && $0.data[0] == 0x17 && $0.data[1] == 1 })
            let nals = FLVReader.nalUnits(lengthPrefixed: Array(keyframe.data.dropFirst(5)))
            XCTAssertEqual(nals.first { $0.first.map { $0 & 0x1f } == 7 }, avcC.sps, "SPS of the first keyframe")
            XCTAssertEqual(nals.first { $0.first.map { $0 & 0x1f } == 8 }, avcC.pps, "PPS of the first keyframe")

            let audioHeader = try XCTUnwrap(tags.first { $0.type == 8 })
            XCTAssertEqual(audioHeader.data[0] >> 4, 10, "AAC")
            XCTAssertEqual(audioHeader.data[1], 0, "AAC sequence header")
            let asc = Array(audioHeader.data.dropFirst(2))
            XCTAssertEqual(asc[0] >> 3, 2, "AAC LC")
            let rateIndex = Int((asc[0] & 0x07) << 1 | asc[1] >> 7)
            let rates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000]
            XCTAssertEqual(rates[rateIndex], rate)
            XCTAssertEqual(Int((asc[1] >> 3) & 0x0f), channels)
        }
    }

    /// ffplay plays the files to the end in about their duration, with nothing on stderr.
    func testFFplayPlaysToTheEnd() throws {
        let asf = try record("play.asf", Expected(seconds: 2))
        let flv = try record("play.flv", Expected(seconds: 2))
        let hevc = try record("play-hevc.asf", Expected(vcodec: "hevc", seconds: 2, decodeOptions: ["-vcodec", "hevc"]))
        for (path, options) in [(asf, [String]()), (flv, []), (hevc, ["-vcodec", "hevc"])] {
            let r = try Tools.run("ffplay", ["-v", "error", "-nodisp", "-autoexit", "-nostats"] + options + [path],
                                  environment: ["SDL_AUDIODRIVER": "dummy", "SDL_VIDEODRIVER": "dummy"], timeout: 30)
            XCTAssertEqual(r.stderr, "", "ffplay \(path)")
            XCTAssertEqual(r.seconds, 2, accuracy: 1.5, "ffplay played \(path) for about its duration")
        }
    }

    /// SIGINT during a real-time recording: a graceful stop, a file with a duration that decodes.
    func testSIGINTLeavesAFinishedFile() throws {
        let path = "\(dir)/int.asf"
        let r = try Tools.livemux(["record", "-q", "--size", "320x240", "-o", path], timeout: 30) { process in
            Thread.sleep(forTimeInterval: 2.5)  // 2.5 s recorded: the duration asserted
            process.signal(SIGINT)
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try Tools.probe(path)
        XCTAssertEqual(try XCTUnwrap(p.format.seconds), 2.3, accuracy: 0.8)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
    }

    /// Real time by default: three seconds of media take about three seconds.
    func testRealtimePacing() throws {
        let path = "\(dir)/rt.flv"
        let r = try Tools.livemux(["record", "-q", "-t", "2", "--size", "160x120", "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.seconds, 2, accuracy: 0.7 * Tools.slowdown)
    }

    /// A closed stdout ends the run promptly with one clear line, not a crash or silence.
    func testClosedStandardOutput() throws {
        let r = try Tools.run("/bin/bash", ["-c", "set -o pipefail; timeout -s KILL 20 '\(Tools.livemux)' record -q --size 320x240 -f flv -o - | head -c 100000 > /dev/null"],
                              timeout: 20)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertLessThan(r.seconds, 5)
        XCTAssertTrue(r.stderr.hasPrefix("error: stdout was closed"), r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
    }

    func testAudioOnlyAndVideoOnly() throws {
        let a = "\(dir)/a-only.flv", v = "\(dir)/v-only.asf"
        XCTAssertEqual(try Tools.livemux(["record", "--no-realtime", "-q", "-t", "2", "--no-video", "-o", a]).status, 0)
        XCTAssertEqual(try Tools.livemux(["record", "--no-realtime", "-q", "-t", "2", "--no-audio", "--size", "160x120", "-o", v]).status, 0)
        let pa = try Tools.probe(a), pv = try Tools.probe(v)
        XCTAssertEqual(pa.streams.map(\.codec_type), ["audio"])
        XCTAssertEqual(pv.streams.map(\.codec_type), ["video"])
        XCTAssertEqual(pv.stream("video")?.packetCount, 60)
        XCTAssertEqual(try Tools.decodeErrors(a), "")
        XCTAssertEqual(try Tools.decodeErrors(v), "")
    }

    /// A duration shorter than one frame (and than one sample) still records the first video frame
    /// and an AAC frame, as ffmpeg does; the frame read past the end is not counted in.
    func testDurationShorterThanAFrameRecordsTheFirstFrame() throws {
        for duration in ["0.01", "0.000001"] {
            let path = "\(dir)/short-\(duration).flv", stats = "\(dir)/short-\(duration).jsonl"
            let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", duration, "--size", "160x120",
                                       "--stats", stats, "-o", path])
            XCTAssertEqual(r.status, 0, r.stderr)
            let p = try Tools.probe(path)
            XCTAssertEqual(p.stream("video")?.packetCount, 1, duration)
            XCTAssertGreaterThanOrEqual(p.stream("audio")?.packetCount ?? 0, 1, duration)
            XCTAssertEqual(try Tools.decodeErrors(path), "", duration)
            let last = try XCTUnwrap(TimingTests.statsLines(stats).last)
            XCTAssertEqual((last["video"] as? [String: Any])?["frames_in"] as? Int, 1, duration)
            try TimingTests.assertEveryVideoFrameAccounted(last)
        }
    }

    /// Separate sources fill the queues at different speeds: the one ahead waits, nothing is dropped.
    func testSmallQueuesLoseNothing() throws {
        _ = try record("small-queue.flv", Expected(seconds: 2), extra: ["--queue-size", "4"])
    }

    /// A live device: an X screen (Xvfb) through x11grab, converted from BGR0 by libswscale, with
    /// the test tone on the same wall clock.
    func testScreenCaptureWithTone() throws {
        // Xvfb picks a free display and writes its number once it takes clients.
        let xvfb = try ChildProcess("/usr/bin/Xvfb", ["-displayfd", "1", "-screen", "0", "320x240x24", "-nolisten", "tcp"], stdout: .pipe)
        defer { xvfb.end() }
        let number = String(decoding: xvfb.stdout!.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let display = ":" + String(try XCTUnwrap(Int(number), "Xvfb did not start"))
        let path = "\(dir)/screen.asf"
        let r = try Tools.livemux(["record", "-q", "-t", "2", "--video", "x11grab:\(display)", "--video-opt", "video_size=320x240",
                                   "--video-opt", "framerate=30", "--size", "320x240", "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        try check(path, Expected(seconds: 2))
    }

    /// One input carrying both streams, as with lavfi's avsynctest (its audio is mono, and kept so).
    func testCombinedInput() throws {
        let path = "\(dir)/sync.asf"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "2", "--size", "320x240",
                                   "--input", "lavfi:avsynctest=size=320x240:framerate=30:samplerate=48000[out0][out1]", "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        try check(path, Expected(channels: 1, seconds: 2))
    }
}

/// Just enough of an FLV reader to check sequence headers.
enum FLVReader {
    struct Tag {
        let type: UInt8
        let timestamp: UInt32
        let data: [UInt8]
    }

    static func tags(_ data: Data) throws -> [Tag] {
        let b = [UInt8](data)
        guard b.count > 13, b[0] == 0x46, b[1] == 0x4C, b[2] == 0x56 else { throw NSError(domain: "not FLV", code: 1) }
        var i = Int(b[5]) << 24 | Int(b[6]) << 16 | Int(b[7]) << 8 | Int(b[8])
        i += 4
        var tags: [Tag] = []
        while i + 11 <= b.count {
            let size = Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            let ts = UInt32(b[i + 7]) << 24 | UInt32(b[i + 4]) << 16 | UInt32(b[i + 5]) << 8 | UInt32(b[i + 6])
            guard i + 11 + size <= b.count else { break }
            tags.append(Tag(type: b[i], timestamp: ts, data: Array(b[(i + 11)..<(i + 11 + size)])))
            i += 11 + size + 4
        }
        return tags
    }

    static func parameterSets(avcC c: [UInt8]) -> (sps: [UInt8], pps: [UInt8])? {
        guard c.count > 8, c[0] == 1, c[5] & 0x1f >= 1 else { return nil }
        let spsLen = Int(c[6]) << 8 | Int(c[7])
        let sps = Array(c[8..<(8 + spsLen)])
        var i = 8 + spsLen
        guard c[i] >= 1 else { return nil }
        i += 1
        let ppsLen = Int(c[i]) << 8 | Int(c[i + 1])
        return (sps, Array(c[(i + 2)..<(i + 2 + ppsLen)]))
    }

    static func nalUnits(lengthPrefixed d: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i + 4 <= d.count {
            let n = Int(d[i]) << 24 | Int(d[i + 1]) << 16 | Int(d[i + 2]) << 8 | Int(d[i + 3])
            guard i + 4 + n <= d.count else { break }
            out.append(Array(d[(i + 4)..<(i + 4 + n)]))
            i += 4 + n
        }
        return out
    }
}
