import Foundation
import XCTest

/// Several sources of a kind (issue 26): audio sources mixed at unity gain with a limiter, video
/// sources composed, filters before the encoders, and what the stats say of each source. Read
/// back with ffmpeg: tone amplitudes (Goertzel) and pixels.
final class MultiSourceTests: TemporaryDirectoryTestCase {
    /// lavfi's `sine` is an eighth of full scale (−18.1 dBFS).
    static let sineAmplitude = 0.125
    static let low = "lavfi:sine=frequency=440:sample_rate=48000"
    /// At another rate: it is resampled to the mix's.
    static let high = "lavfi:sine=frequency=1000:sample_rate=44100"
    static let red = "lavfi:color=c=red:size=640x360:rate=30"
    /// Another size, rate and pixel format than the first: converted.
    static let blue = "lavfi:color=c=blue:size=320x240:rate=25,format=rgb24"

    @discardableResult
    func record(_ arguments: [String], seconds: Double = 3, realtime: Bool = false, name: String = "out.flv") throws -> String {
        let path = "\(dir)/\(name)"
        let r = try Tools.livemux(["record", "-q", "-t", String(seconds)] + (realtime ? [] : ["--no-realtime"]) + arguments + ["-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        return path
    }

    /// Each tone's amplitude in half-second windows after the first (the encoder's start).
    func tones(_ path: String, _ frequencies: [Double]) throws -> [[Double]] {
        let samples = try MediaAnalysis.samples(path)
        return frequencies.map { Array(MediaAnalysis.amplitudes(of: $0, in: samples, window: 0.5).dropFirst()) }
    }

    func testTwoAudioSourcesAreMixedAtUnityGainAndNamedInTheStats() throws {
        let stats = "\(dir)/s.jsonl"
        let path = try record(["--no-video", "--audio", Self.low, "--audio", Self.high, "--stats", stats])
        let (low, high) = try { let t = try tones(path, [440, 1000]); return (t[0], t[1]) }()
        XCTAssertGreaterThanOrEqual(low.count, 4)
        for a in low + high { XCTAssertEqual(a, Self.sineAmplitude, accuracy: 0.01, "440 Hz \(low), 1000 Hz \(high)") }
        let last = try XCTUnwrap(TimingTests.statsLines(stats).last)
        let sources = try XCTUnwrap(last["sources"] as? [[String: Any]])
        XCTAssertEqual(sources.map { $0["label"] as? String }, ["a0", "a1"])
        XCTAssertEqual(sources.map { $0["name"] as? String }, [Self.low, Self.high])
        for source in sources {
            let peak = try XCTUnwrap(source["peak_dbfs"] as? Double, "\(source)")
            XCTAssertEqual(peak, 20 * log10(Self.sineAmplitude), accuracy: 0.5, "\(source)")
        }
    }

    func testVolumeInDecibelsAndMute() throws {
        let quieter = try record(["--no-video", "--audio", Self.low, "--audio", Self.high, "--volume", "a1=-6dB"], name: "v.flv")
        let t = try tones(quieter, [440, 1000])
        for a in t[0] { XCTAssertEqual(a, Self.sineAmplitude, accuracy: 0.01) }
        for a in t[1] { XCTAssertEqual(a, Self.sineAmplitude / 2, accuracy: 0.006, "-6 dB is half the amplitude") }
        let muted = try record(["--no-video", "--audio", Self.low, "--audio", Self.high, "--mute", "a0"], name: "m.flv")
        let m = try tones(muted, [440, 1000])
        for a in m[0] { XCTAssertLessThan(a, 0.002, "a0 muted") }
        for a in m[1] { XCTAssertEqual(a, Self.sineAmplitude, accuracy: 0.01) }
    }

    /// Two sources at full scale add up to twice it: the limiter keeps the sum under 0 dBFS,
    /// where amix without normalizing would clip.
    func testFullScaleSourcesAreLimitedNotClipped() throws {
        let loud = "lavfi:aevalsrc=0.99*sin(2*PI*440*t):s=48000"
        let path = try record(["--no-video", "--audio", loud, "--audio", loud])
        let samples = try MediaAnalysis.samples(path).dropFirst(48000)
        let peak = samples.map { abs($0) }.max() ?? 0
        XCTAssertLessThanOrEqual(peak, 1.0, "the mix of two full-scale sources clipped")
        XCTAssertGreaterThan(peak, 0.85, "the limiter should hold the sum near its ceiling, not halve it")
    }

    func testASecondVideoSourceIsAPictureInPictureBottomRight() throws {
        let path = try record(["--no-audio", "--video", Self.red, "--video", Self.blue], seconds: 2)
        let frame = try MediaAnalysis.frame(path, at: 1)
        XCTAssertEqual(frame.width, 640)
        XCTAssertEqual(frame.height, 360)
        // A quarter of the width (160), aspect kept (120), 640/40 = 16 from the corner.
        let (left, top, right, bottom) = (640 - 16 - 160, 360 - 16 - 120, 640 - 16, 360 - 16)
        assertColor(frame, (left + right) / 2, (top + bottom) / 2, blue: true)
        assertColor(frame, left + 4, top + 4, blue: true)
        assertColor(frame, right - 4, bottom - 4, blue: true)
        assertColor(frame, left - 6, top - 6, blue: false)
        assertColor(frame, right + 6, bottom + 6, blue: false)
        assertColor(frame, 100, 100, blue: false)
    }

    func testSideBySideKeepsEachSourcesAspect() throws {
        let path = try record(["--no-audio", "--video", Self.red, "--video", Self.blue, "--layout", "side-by-side"], seconds: 2)
        let frame = try MediaAnalysis.frame(path, at: 1)
        XCTAssertEqual([frame.width, frame.height], [640, 360])
        // Cells of 320x360: the first 320x180 in the middle of its cell, the second 320x240.
        assertColor(frame, 160, 180, blue: false)
        assertColor(frame, 480, 180, blue: true)
        let black = MediaAnalysis.pixel(frame, 160, 40)
        XCTAssertLessThan(black.r + black.g + black.b, 60, "letterbox above the first: \(black)")
    }

    func assertColor(_ frame: (width: Int, height: Int, rgb: [UInt8]), _ x: Int, _ y: Int, blue: Bool,
                     file: StaticString = #filePath, line: UInt = #line) {
        let p = MediaAnalysis.pixel(frame, x, y)
        if blue {
            XCTAssertTrue(p.b > 200 && p.r < 60, "(\(x), \(y)) should be blue: \(p)", file: file, line: line)
        } else {
            XCTAssertTrue(p.r > 200 && p.b < 60, "(\(x), \(y)) should be red: \(p)", file: file, line: line)
        }
    }

    func testVideoAndAudioFiltersRunBeforeTheEncoders() throws {
        let path = try record(["--video", Self.red, "--audio", Self.low, "--vf", "negate", "--af", "volume=0.5"], seconds: 2)
        let p = MediaAnalysis.pixel(try MediaAnalysis.frame(path, at: 1), 320, 180)
        XCTAssertTrue(p.r < 40 && p.g > 200 && p.b > 200, "red negated is cyan: \(p)")
        for a in try tones(path, [440])[0] { XCTAssertEqual(a, Self.sineAmplitude / 2, accuracy: 0.006) }
    }

    /// A graph with the sources' labels in place of the layout and the mix; its picture's size is
    /// the recording's.
    func testFilterComplexTakesTheSourcesByLabel() throws {
        let tall = "lavfi:color=c=blue:size=320x360:rate=30"
        let path = try record(["--video", Self.red, "--video", tall, "--audio", Self.low, "--audio", Self.high,
                               "--filter-complex", "[v0][v1]hstack[vout]",
                               "--filter-complex", "[a0][a1]amix=inputs=2:weights=0 1:normalize=0[aout]"], seconds: 2)
        let frame = try MediaAnalysis.frame(path, at: 1)
        XCTAssertEqual([frame.width, frame.height], [960, 360])
        assertColor(frame, 320, 180, blue: false)
        assertColor(frame, 800, 180, blue: true)
        let t = try tones(path, [440, 1000])
        for a in t[0] { XCTAssertLessThan(a, 0.002, "weight 0 leaves a0 out") }
        for a in t[1] { XCTAssertEqual(a, Self.sineAmplitude, accuracy: 0.01) }
    }

    /// A graph that does not parse or does not fit the sources: one error line naming the
    /// problem, exit 64, no file.
    func testBadGraphsAreUsageErrorsAndCreateNothing() throws {
        let cases: [([String], String)] = [
            (["--vf", "nosuch=1"], "no filter is named 'nosuch'"),
            (["--vf", "scale=w=abc"], "--vf scale=w=abc"),
            (["--filter-complex", "[v0][v5]hstack[vout]"], "[v5] names no source"),
            (["--filter-complex", "[v0]hflip"], "no output [vout] or [aout]"),
            (["--filter-complex", "[v0]split[vout][extra]"], "output [extra] that goes nowhere"),
            (["--filter-complex", "[v0]hflip[vout]", "--vf", "vflip"], "put the filter inside the graph"),
            (["--volume", "a2=0.5"], "there is one audio source, a0"),
            (["--volume", "a0=loud"], "--volume takes aN=GAIN"),
            (["--layout", "mosaic"], "--layout"),
        ]
        for (arguments, message) in cases {
            let path = "\(dir)/bad.flv"
            let r = try Tools.livemux(["record", "--no-realtime", "-t", "1", "--video", Self.red] + arguments + ["-o", path])
            XCTAssertEqual(r.status, 64, "\(arguments): \(r.stderr)")
            let lines = r.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "\(arguments): \(r.stderr)")
            XCTAssertTrue(lines.first?.hasPrefix("error: ") ?? false, r.stderr)
            XCTAssertTrue(r.stderr.contains(message), "\(arguments): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "\(arguments) created the output")
        }
    }

    /// Issue 42, item 8: `--layout` with a graph that makes `[vout]` was ignored without a word.
    func testLayoutWithAFilterComplexPictureIsRefused() throws {
        let path = "\(dir)/out.flv"
        let tall = "lavfi:color=c=blue:size=320x360:rate=30"
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "1", "--video", Self.red, "--video", tall,
                                   "--layout", "side-by-side", "--filter-complex", "[v0][v1]hstack[vout]", "-o", path])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertEqual(r.stderr, "error: --layout side-by-side and a --filter-complex that makes [vout] cannot both be given:"
                       + " the graph places the sources; drop --layout, or place them inside the graph (overlay, hstack)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "nothing created")
    }

    /// Issue 42, item 8: `--vf scale=641:361` lost a column and a row without a word; one warning
    /// names the size encoded.
    func testAnOddSizeFromTheVideoFilterIsWarnedOnce() throws {
        let path = "\(dir)/out.flv"
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "1", "--video", Self.red, "--vf", "scale=641:361", "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        XCTAssertEqual(warnings, ["warning: --vf makes 641x361 pictures, and the encoder takes even sizes only: it encodes 640x360,"
                                  + " a column and a row less (make the graph's size even, or give --size)"], r.stderr)
        let stream = try XCTUnwrap(try Tools.probe(path).streams.first { $0.codec_type == "video" })
        XCTAssertEqual([stream.width, stream.height], [640, 360])
    }

    /// Issue 42, item 8: a file in the picture-in-picture that ends froze on its last frame
    /// without a word; it is said once, and the recording goes on to its end.
    func testAPictureInPictureSourceThatEndsIsSaidOnce() throws {
        let path = "\(dir)/out.flv"
        let ending = "lavfi:color=c=blue:size=320x240:rate=25:duration=1"
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "3", "--video", Self.red, "--video", ending, "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        XCTAssertEqual(warnings, ["warning: v1 ended; its picture stays on its last frame while the recording goes on"], r.stderr)
        let duration = try XCTUnwrap(Double(try Tools.probe(path).format.duration ?? ""))
        XCTAssertEqual(duration, 3, accuracy: 0.1)
        // Two sources that run to the recording's end say nothing.
        let both = try Tools.livemux(["record", "--no-realtime", "-t", "2", "--video", Self.red, "--video", Self.blue, "-y", "-o", path])
        XCTAssertEqual(both.status, 0, both.stderr)
        XCTAssertFalse(both.stderr.contains("warning: "), both.stderr)
    }

    /// An input carrying both streams and one more audio source: the mix keeps the input's own
    /// timing exact (every beep within 1 ms of its flash, as with one source).
    func testInputPlusAnAudioSourceKeepsSync() throws {
        let input = "lavfi:avsynctest=size=320x240:framerate=30:samplerate=48000:period=1[out0][out1]"
        let path = try record(["--input", input, "--audio", "lavfi:sine=frequency=3000:sample_rate=48000", "--volume", "a1=0.2",
                               "--size", "320x240"], seconds: 3.5, name: "sync.asf")
        let flashes = try SyncAnalysis.flashTimes(path)
        let onsets = try SyncAnalysis.beepOnsets(path, rate: 48000)
        XCTAssertGreaterThanOrEqual(flashes.count, 2)
        for flash in flashes {
            let onset = onsets.min { abs($0 - flash) < abs($1 - flash) } ?? .infinity
            XCTAssertLessThanOrEqual(abs(onset - flash) * 1000, 1.0, "beep onset from its flash (ms)")
        }
        for a in try tones(path, [3000])[0] { XCTAssertEqual(a, Self.sineAmplitude * 0.2, accuracy: 0.004, "a1 mixed in") }
    }

    /// A source after the first that ends: silence in its place, the recording goes on.
    func testASecondSourceThatEndsLeavesSilenceAndTheRecordingGoesOn() throws {
        let stats = "\(dir)/s.jsonl"
        let short = "lavfi:sine=frequency=1000:sample_rate=48000:duration=1"
        let path = try record(["--no-video", "--audio", Self.low, "--audio", short, "--stats", stats], seconds: 3)
        let t = try tones(path, [440, 1000])  // windows from 0.5 s on
        XCTAssertEqual(t[1][0], Self.sineAmplitude, accuracy: 0.01, "a1 before its end")
        for a in t[1].dropFirst(2) { XCTAssertLessThan(a, 0.002, "silence after a1 ended: \(t[1])") }
        for a in t[0] { XCTAssertEqual(a, Self.sineAmplitude, accuracy: 0.01) }
        let duration = try XCTUnwrap(Double(try Tools.probe(path).format.duration ?? ""))
        XCTAssertEqual(duration, 3, accuracy: 0.1)
        let sources = try XCTUnwrap(TimingTests.statsLines(stats).last?["sources"] as? [[String: Any]])
        XCTAssertEqual(sources.last?["state"] as? String, "ended")
    }

    /// At real time the mix waits for the second source only briefly: it is in every tenth of a
    /// second of the recording, never replaced by silence.
    func testRealTimeMixHasTheSecondSourceThroughout() throws {
        let path = try record(["--no-video", "--audio", Self.low, "--audio", Self.high], seconds: 3, realtime: true)
        let samples = try MediaAnalysis.samples(path)
        let windows = MediaAnalysis.amplitudes(of: 1000, in: samples, window: 0.1).dropFirst(2).dropLast()
        XCTAssertGreaterThanOrEqual(windows.count, 25)
        for a in windows { XCTAssertEqual(a, Self.sineAmplitude, accuracy: 0.02, "1000 Hz per 100 ms: \(windows)") }
    }

    /// A second source that stops delivering without ending (a pipe nobody writes to) holds the
    /// mix back once, for at most its wait, not on every frame: the first source's audio keeps
    /// real time. Before, each of a0's frames waited 40 ms for it, and 3 s took twice as long.
    func testAStalledSecondSourceDoesNotHoldBackTheFirst() throws {
        let raw = "\(dir)/half.raw", fifo = "\(dir)/stalls.raw", stats = "\(dir)/s.jsonl"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=0.5",
                                            "-f", "s16le", raw])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // Half a second of audio, then nothing until the pipe closes, after the recording's end.
        let writer = try ChildProcess("/bin/sh", ["-c", "exec 3>\(fifo); cat \(raw) >&3; sleep 4"])
        defer { _ = writer.end() }
        // Raw samples, probed no further than needed: the source opens at once and starts.
        let path = try record(["--no-video", "--audio", Self.low, "--audio", "s16le:\(fifo)", "--audio-opt", "sample_rate=48000",
                               "--audio-opt", "ch_layout=mono", "--audio-opt", "analyzeduration=1000", "--audio-opt", "probesize=32",
                               "--stats", stats], seconds: 3, realtime: true)
        // Until the end of the media (the run then waits for the pipe's reader to return).
        let lines = try TimingTests.statsLines(stats).filter { ($0["media_time_s"] as? Double ?? 0) < 2.9 }
        let speeds = lines.compactMap { $0["speed_x"] as? Double }
        XCTAssertGreaterThanOrEqual(speeds.count, 2)
        for speed in speeds.dropFirst() { XCTAssertGreaterThan(speed, 0.85, "the first source kept real time: \(speeds)") }
        for a in try tones(path, [440])[0] { XCTAssertEqual(a, Self.sineAmplitude, accuracy: 0.01) }
    }

    /// Unpaced, a later source much faster than the first (60 fps under 10 fps; 96 kHz under 8 kHz)
    /// fills its queue with frames the first has passed: they are dropped and it goes on. Before,
    /// it waited for room while the compositor waited for it to reach the first's time: both
    /// waited forever, and not even SIGTERM ended the run.
    func testFasterSourcesThanTheFirstNeverWaitForEachOther() throws {
        let path = "\(dir)/rates.flv"
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "3",
                                   "--video", "lavfi:color=c=red:size=320x240:rate=10", "--video", "lavfi:testsrc2=size=160x120:rate=60",
                                   "--audio", "lavfi:sine=sample_rate=8000", "--audio", "lavfi:sine=frequency=1000:sample_rate=96000",
                                   "-o", path], timeout: 20)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.probe(path).stream("video")?.packetCount, 30)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
    }
}
