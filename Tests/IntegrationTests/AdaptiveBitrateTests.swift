import Foundation
import XCTest

/// Issue 16: livemux pushing 2 Mbit/s to a real nginx-rtmp through our throttling proxy
/// (scripts/throttle-proxy: a token bucket on loopback with small socket buffers), read back from
/// nginx's own recording. The numbers each target measured are printed for docs/latency.md.
final class AdaptiveBitrateTests: TemporaryDirectoryTestCase {
    /// Starts the proxy from `port` to `upstream` with its schedule (START:BITS_PER_SECOND,…).
    func proxy(_ port: Int, to upstream: Int, schedule: String) throws -> ChildProcess {
        let script = Tools.packageRoot.appendingPathComponent("scripts/throttle-proxy").path
        let p = try ChildProcess.background("python3", [script, String(port), String(upstream), schedule, "--log", "\(dir)/proxy.log"],
                               directory: dir, name: "proxy")
        // Not a test connection: the proxy would pass it on, and a one-shot listener behind it would end.
        let deadline = Date().addingTimeInterval(5)
        while String(decoding: p.stdoutFile, as: UTF8.self).isEmpty && Date() < deadline { usleep(20_000) }
        return p
    }

    /// Video kbit/s per 2 s window (a GOP) of DTS, and the video DTS list, from ffprobe's packets.
    func videoWindows(_ path: String) throws -> (kbps: [Int: Double], dts: [Double], audio: Int) {
        let p = try Tools.probe(path, packets: true)
        let video = try XCTUnwrap(p.stream("video")).index
        var bytes: [Int: Int] = [:], dts: [Double] = [], audio = 0
        for packet in p.packets ?? [] {
            guard packet.stream_index == video else { audio += 1; continue }
            let t = Double(packet.dts_time ?? "0") ?? 0
            dts.append(t)
            bytes[Int(t / 2) * 2, default: 0] += Int(packet.size) ?? 0
        }
        return (bytes.mapValues { Double($0) * 8 / 2 / 1000 }, dts, audio)
    }

    /// The 50 s push of the issue: 10 Mbit/s, 1 Mbit/s from 10 s to 30 s, 10 Mbit/s again.
    func testBitRateFollowsASqueezedLinkAndComesBack() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let server = try RTMPServer(directory: dir)
        try server.start()
        defer { server.stop() }
        let port = try Network.freePort()
        let link = try proxy(port, to: server.port, schedule: "0:10000000,10:1000000,30:10000000")
        defer { link.end(signal: SIGKILL) }
        let file = "\(dir)/rec.flv", stats = "\(dir)/stats.jsonl"
        let r = try Tools.livemux(["record", "--size", "640x360", "--fps", "30", "--vbitrate", "2M", "-t", "50",
                                   "-o", "rtmp://127.0.0.1:\(port)/live/key", "-o", file, "--stats", stats], timeout: 90)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains(" vbitrate=") && r.stderr.contains(" backlog="), "the progress line shows both: \(r.stderr)")
        server.stop()
        let recorded = try XCTUnwrap(try server.recordedFiles().first)
        let (kbps, dts, audio) = try videoWindows(recorded)
        let windows = kbps.keys.sorted().map { "\($0): \(Int(kbps[$0]!))" }.joined(separator: ", ")
        print("adaptive: nginx video kbit/s per 2 s window: \(windows)")

        // From 8 s after the squeeze to its end, video fits the link.
        let squeezed = stride(from: 18, to: 30, by: 2).map { kbps[$0] ?? 0 }
        print("adaptive: squeezed windows max \(Int(squeezed.max() ?? 0)) kbit/s")
        XCTAssertLessThanOrEqual(squeezed.max() ?? 0, 850, windows)
        // The bit rate fell, the frames stayed.
        let inSqueeze = dts.filter { $0 >= 10 && $0 < 30 }.count
        print("adaptive: frames in the squeeze \(inSqueeze) of 600")
        XCTAssertGreaterThanOrEqual(inSqueeze, 540)
        let expectedAudio = Int((50.0 * 48000 / 1024).rounded(.up))
        print("adaptive: audio packets \(audio) of \(expectedAudio)")
        XCTAssertGreaterThanOrEqual(audio, expectedAudio - 2, "audio complete")
        // Back up within 12 s after the link opened.
        let back = stride(from: 30, to: 48, by: 2).first { (kbps[$0] ?? 0) >= 1600 }
        print("adaptive: first window >= 1.6 Mbit/s starts at \(back.map(String.init) ?? "none") s")
        XCTAssertLessThanOrEqual(try XCTUnwrap(back, windows) + 2, 42, windows)
        XCTAssertEqual(try Tools.decodeErrors(recorded), "")

        // The backlog at the end of the squeeze, as livemux measured it.
        let lines = try TimingTests.statsLines(stats).filter { $0["final"] as? Bool == false }
        let end = try XCTUnwrap(lines.min { abs(($0["media_time_s"] as! Double) - 30) < abs(($1["media_time_s"] as! Double) - 30) })
        let net = try XCTUnwrap((end["network"] as? [[String: Any]])?.first)
        let backlog = try XCTUnwrap(net["backlog_ms"] as? Double)
        print("adaptive: backlog at the end of the squeeze \(backlog) ms, link \(net["link_kbps"] ?? 0) kbit/s")
        XCTAssertEqual(net["kernel_queue_seen"] as? Bool, true, "the socket's queue is read")
        XCTAssertLessThanOrEqual(backlog, 2000)
        let check = try StatsSchemaTests.validate(stats, in: dir)
        XCTAssertEqual(check.status, 0, check.stdoutText + check.stderr)

        // The file beside it keeps every frame, and its own encode keeps --vbitrate (issue 32).
        XCTAssertEqual(try Tools.probe(file).stream("video")?.packetCount, 1500)
        XCTAssertEqual(try Tools.decodeErrors(file), "")
        let fileKbps = try BackupRecordingTests.videoKbps(file)
        let fileSqueezed = stride(from: 10, to: 30, by: 2).map { fileKbps[$0] ?? 0 }
        print("adaptive: the file's video in the squeeze min \(Int(fileSqueezed.min() ?? 0)) kbit/s")
        XCTAssertGreaterThan(fileSqueezed.min() ?? 0, 1600, "\(fileKbps.sorted { $0.key < $1.key })")
    }

    /// A link too slow for even the floor, with the adaptive bit rate off: the output skips to the
    /// newest keyframe past --max-latency (warned once per episode), audio kept, and stays playable.
    func testMaxLatencySkipsToTheNewestKeyframe() throws {
        let listen = try Network.freePort(), port = try Network.freePort()
        let viewer = try ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "tcp://127.0.0.1:\(listen)?listen=1",
                                               "-c", "copy", "\(dir)/tcp.flv"], directory: dir, name: "viewer")
        usleep(300_000)
        let link = try proxy(port, to: listen, schedule: "0:600000")
        defer { link.end(signal: SIGKILL) }
        let stats = "\(dir)/stats.jsonl"
        let r = try Tools.livemux(["record", "--size", "640x360", "--vbitrate", "2M", "-t", "8", "--no-adaptive-bitrate",
                                   "--max-latency", "1", "-f", "flv", "-o", "tcp://127.0.0.1:\(port)", "--stats", stats], timeout: 40)
        viewer.finish(within: 15)
        let warnings = r.stderr.components(separatedBy: "over --max-latency 1.0 s: skipping to the newest keyframe (audio kept)").count - 1
        print("adaptive: max-latency warnings \(warnings); \(r.stderr)")
        XCTAssertGreaterThanOrEqual(warnings, 1, r.stderr)
        let lines = try TimingTests.statsLines(stats)
        let last = try XCTUnwrap((lines.last?["network"] as? [[String: Any]])?.first)
        let skips = try XCTUnwrap(last["latency_skips"] as? Int)
        XCTAssertGreaterThanOrEqual(skips, warnings)
        let backlogs = lines.dropFirst(4).compactMap { (($0["network"] as? [[String: Any]])?.first?["backlog_ms"] as? Double) }
        print("adaptive: skips \(skips), backlog after 4 s max \(Int(backlogs.max() ?? 0)) ms")
        let p = try Tools.probe("\(dir)/tcp.flv")
        XCTAssertGreaterThanOrEqual(Double(p.stream("audio")?.packetCount ?? 0), 0.9 * 8 * 48000 / 1024, "audio kept")
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/tcp.flv"), "")
    }
}
