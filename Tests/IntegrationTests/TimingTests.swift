import Foundation
import XCTest

/// Drift, `--stats`, and timestamps read back from real recordings.
final class TimingTests: TemporaryDirectoryTestCase {
    /// The `--stats` lines of a run, decoded.
    static func statsLines(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "a JSON object: \($0)")
        }
    }

    /// Every video frame that came in is accounted for in a final stats line: encoded, dropped,
    /// or encoded twice (duplicated). The frame read past `-t` is not part of the recording.
    static func assertEveryVideoFrameAccounted(_ last: [String: Any], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(last["final"] as? Bool, true, file: file, line: line)
        let v = try XCTUnwrap(last["video"] as? [String: Any], file: file, line: line)
        let count = { (key: String) throws -> Int in try XCTUnwrap(v[key] as? Int, key, file: file, line: line) }
        XCTAssertEqual(try count("frames_in"), try count("packets_out") + count("dropped") - count("duplicated"), "\(v)", file: file, line: line)
    }

    /// avsynctest whose audio clock runs `factor` times the video clock: a beep and flash every
    /// 5 s, audio made at 48000·factor samples a second but labelled 48 kHz and stamped on the
    /// true clock, like a microphone whose crystal is off.
    func recordDrifting(factor: Double, name: String) throws -> (offsets: [Double], stats: [[String: Any]]) {
        let rate = Int((48000 * factor).rounded())
        let path = "\(dir)/\(name).asf", stats = "\(dir)/\(name).jsonl"
        let graph = "avsynctest=size=160x120:framerate=30:samplerate=\(rate):period=5[a][out1];"
            + "[a]asetrate=48000,asetpts=N/\(rate)/TB[out0]"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "60", "--size", "160x120", "--fps", "30",
                                   "--sample-rate", "48000", "--input", "lavfi:\(graph)", "--stats", stats, "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        let flashes = try SyncAnalysis.flashTimes(path)
        let onsets = try SyncAnalysis.beepOnsets(path, rate: 48000)
        // 12 flashes are drawn; a correction that drops a frame drops a flash when it is on that
        // frame (a step every 6.7 s meets the 5 s flashes every 20 s), so 9 can be left.
        XCTAssertGreaterThanOrEqual(flashes.count, 8, "flashes: \(flashes)")
        let offsets = flashes.map { f in ((onsets.min { abs($0 - f) < abs($1 - f) } ?? .infinity) - f) * 1000 }
        return (offsets, try Self.statsLines(stats))
    }

    /// Audio 0.5% fast against video for 60 s of media: without a correction the last beep would
    /// come 300 ms after its flash; video follows audio, so every flash stays within one frame.
    func testVideoFollowsAFastAudioClock() throws {
        let (offsets, stats) = try recordDrifting(factor: 1.005, name: "fast")
        let frame = 1000.0 / 30
        for o in offsets { XCTAssertLessThan(abs(o), frame, "beep vs flash \(offsets)") }
        let last = try XCTUnwrap(stats.last)
        XCTAssertEqual(try XCTUnwrap(last["drift_ms"] as? Double), 300, accuracy: 10)
        XCTAssertLessThan(abs(try XCTUnwrap(last["av_offset_ms"] as? Double)), frame)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(last["drift_corrections"] as? Int), 8)
        let video = try XCTUnwrap(last["video"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(video["duplicated"] as? Int), 8)
        XCTAssertEqual(try XCTUnwrap(video["packets_out"] as? Int), 1800, "the duration is kept")
    }

    func testVideoFollowsASlowAudioClock() throws {
        let (offsets, stats) = try recordDrifting(factor: 0.995, name: "slow")
        for o in offsets { XCTAssertLessThan(abs(o), 1000.0 / 30, "beep vs flash \(offsets)") }
        let last = try XCTUnwrap(stats.last)
        XCTAssertEqual(try XCTUnwrap(last["drift_ms"] as? Double), -300, accuracy: 10)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(last["drift_corrections"] as? Int), 8)
    }

    /// One JSON object a second, with every field the issue names; none when nothing drifts.
    func testStatsLines() throws {
        let path = "\(dir)/s.flv", stats = "\(dir)/s.jsonl"
        let r = try Tools.livemux(["record", "-q", "-t", "2.5", "--size", "160x120", "--stats", stats, "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = try Self.statsLines(stats)
        XCTAssertGreaterThanOrEqual(lines.count, 3, "one a second at real time, and a last one")
        let times = lines.compactMap { $0["media_time_s"] as? Double }
        XCTAssertEqual(times.count, lines.count)
        XCTAssertEqual(times, times.sorted())
        let last = try XCTUnwrap(lines.last)
        XCTAssertEqual(try XCTUnwrap(last["media_time_s"] as? Double), 2.5, accuracy: 0.1)
        for key in ["speed_x", "bitrate_kbps", "queue_depth_packets", "av_offset_ms", "drift_corrections", "latency_ms", "output_bytes"] {
            XCTAssertNotNil(last[key], key)
        }
        let video = try XCTUnwrap(last["video"] as? [String: Any])
        XCTAssertEqual(video["packets_out"] as? Int, 75)
        try Self.assertEveryVideoFrameAccounted(last)
        XCTAssertNotNil(video["frames_in"]); XCTAssertNotNil(video["dropped"]); XCTAssertNotNil(video["bitrate_kbps"])
        XCTAssertEqual(last["drift_corrections"] as? Int, 0)
        let latency = try XCTUnwrap(last["latency_ms"] as? [String: Any])
        let p50 = try XCTUnwrap(latency["p50"] as? Double), p99 = try XCTUnwrap(latency["p99"] as? Double)
        XCTAssertGreaterThan(p50, 0)
        XCTAssertLessThanOrEqual(p50, p99)
        let bytes = try XCTUnwrap(last["output_bytes"] as? [String: Int])
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertEqual(bytes[path], size, "bytes handed to the file sink are the file's size")
    }

    /// Frame 10 stamped like frame 5 and frame 20 like frame 19 (video), and one audio frame stamped
    /// 2048 samples early: video frames dropped, the audio frame repaired, all counted; the file
    /// is clean.
    func testBackwardTimestampsAreRepairedOrDropped() throws {
        let path = "\(dir)/r.asf", stats = "\(dir)/r.jsonl"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "2", "--size", "160x120",
                                   "--video", #"lavfi:testsrc2=size=160x120:rate=30,setpts=if(eq(N\,10)\,PTS-5\,if(eq(N\,20)\,PTS-1\,PTS))"#,
                                   "--audio", #"lavfi:sine=sample_rate=48000,asetpts=if(eq(N\,24576)\,PTS-2048\,PTS)"#,
                                   "--stats", stats, "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let last = try XCTUnwrap(Self.statsLines(stats).last)
        let video = try XCTUnwrap(last["video"] as? [String: Any]), audio = try XCTUnwrap(last["audio"] as? [String: Any])
        XCTAssertEqual(video["timestamp_repairs"] as? Int, 2)
        XCTAssertEqual(video["dropped"] as? Int, 2)
        try Self.assertEveryVideoFrameAccounted(last)
        XCTAssertEqual(audio["timestamp_repairs"] as? Int, 1)
        XCTAssertEqual(audio["dropped"] as? Int, 0)
        let p = try Tools.probe(path, packets: true)
        for s in p.streams {
            let dts = (p.packets ?? []).filter { $0.stream_index == s.index }.compactMap(\.dts)
            XCTAssertEqual(zip(dts, dts.dropFirst()).filter { $0 >= $1 }.count, 0, "DTS of stream \(s.index) strictly increase")
        }
        XCTAssertEqual(try XCTUnwrap(p.stream("audio")).packetCount, 94, "no audio lost")
        XCTAssertEqual(try Tools.decodeErrors(path), "")
    }

    /// Audio whose stamps step back 100 ms at 1 s and go on from there (a device's stamps can):
    /// one frame is repaired, and the stamps after it are followed, not repaired to the end (which
    /// left the drift blind); the audio stays complete and in order.
    func testAudioStampsThatStepBackAreFollowedAfterOneRepair() throws {
        let path = "\(dir)/s.flv", stats = "\(dir)/s.jsonl"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "2", "--size", "160x120",
                                   "--audio", #"lavfi:sine=sample_rate=48000,asetpts=if(gte(N\,48000)\,PTS-4800\,PTS)"#,
                                   "--stats", stats, "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let audio = try XCTUnwrap(try Self.statsLines(stats).last?["audio"] as? [String: Any])
        XCTAssertEqual(audio["timestamp_repairs"] as? Int, 1, "\(audio)")
        XCTAssertEqual(audio["dropped"] as? Int, 0, "\(audio)")
        XCTAssertEqual(try XCTUnwrap(try Tools.probe(path).stream("audio")).packetCount, 94, "no audio lost")
        XCTAssertEqual(try Tools.decodeErrors(path), "")
    }

    func testStatsToStderrAndBadPath() throws {
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "1", "--size", "160x120", "--stats", "-", "-o", "\(dir)/e.asf"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("{\"audio\"") }, r.stderr)
        XCTAssertFalse(r.stderr.isEmpty)
        let bad = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "1", "--stats", "\(dir)/no/such/dir/s.jsonl", "-o", "\(dir)/f.asf"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.hasPrefix("error: cannot create the --stats file"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/f.asf"), "nothing recorded")
    }
}
