import Foundation
import XCTest

/// Pushing live to a real RTMP server (nginx-rtmp on loopback), reconnecting after it dies, and
/// serving viewers over HTTP — all read back with ffprobe and ffmpeg.
final class NetworkTests: TemporaryDirectoryTestCase {
    let key = "s3cr3tKEY42"

    func requireNginx() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
    }

    func packetCounts(_ path: String) throws -> (video: Int, audio: Int) {
        let p = try Tools.probe(path)
        return (p.stream("video")?.packetCount ?? 0, p.stream("audio")?.packetCount ?? 0)
    }

    /// A 4 s push is recorded by nginx with the right codecs and ≥ 95% of the packets, decodes
    /// cleanly, and ffprobe playing the live stream from nginx meanwhile sees both streams.
    func testPushToNginxIsRecordedAndPlayableLive() throws {
        try requireNginx()
        let server = try RTMPServer(directory: dir)
        try server.start()
        defer { server.stop() }
        let url = "rtmp://127.0.0.1:\(server.port)/live/\(key)"
        var live: ChildProcess?
        let r = try Tools.livemux(["record", "--size", "160x120", "--fps", "30", "-t", "4", "-o", url], timeout: 30) { _ in
            waitUntil(deadline: 10) { server.log.contains("publish: name='\(self.key)'") }
            live = try? ChildProcess.background("ffprobe", ["-v", "error", "-rw_timeout", "5000000", "-of", "json", "-show_streams", url],
                                   directory: self.dir, name: "liveprobe")
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains(key), "the stream key is never printed: \(r.stderr)")
        let probe = try XCTUnwrap(live)
        probe.finish(within: 10)
        let streams = String(decoding: probe.stdoutFile, as: UTF8.self)
        XCTAssertTrue(streams.contains("\"codec_name\": \"h264\""), "live ffprobe sees video: \(streams) \(probe.stderrFile)")
        XCTAssertTrue(streams.contains("\"codec_name\": \"aac\""), "live ffprobe sees audio: \(streams)")

        server.stop()  // finishes the recording
        let files = try server.recordedFiles()
        XCTAssertEqual(files.count, 1, "one publish, one recording")
        let recorded = try XCTUnwrap(files.first)
        let p = try Tools.probe(recorded)
        XCTAssertEqual(p.stream("video")?.codec_name, "h264")
        XCTAssertEqual(p.stream("audio")?.codec_name, "aac")
        let (v, a) = try packetCounts(recorded)
        XCTAssertGreaterThanOrEqual(Double(v), 0.95 * 120, "video packets recorded by nginx")
        XCTAssertGreaterThanOrEqual(Double(a), 0.95 * (48000 * 4 / 1024), "audio packets recorded by nginx")
        XCTAssertEqual(try Tools.decodeErrors(recorded), "")
    }

    /// nginx killed mid-push and started again: the push reconnects by itself (logging each
    /// attempt, key masked), the second recording decodes, and a parallel file holds every frame.
    func testPushReconnectsAfterServerRestartWhileTheRecordingGoesOn() throws {
        try requireNginx()
        let server = try RTMPServer(directory: dir)
        try server.start()
        defer { server.stop() }
        let url = "rtmp://127.0.0.1:\(server.port)/live/\(key)"
        let file = "\(dir)/rec.flv"
        let r = try Tools.livemux(["record", "--size", "160x120", "--fps", "30", "-t", "7", "--reconnect-delay", "0.2",
                                   "--reconnect-max-delay", "1", "-o", url, "-o", file], timeout: 40) { _ in
            usleep(2_000_000)  // 2 s pushed before the server dies
            server.kill()
            usleep(1_500_000)  // down for 1.5 s: the attempts meanwhile fail
            try? server.start()
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains(key), "the stream key is never printed: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("reconnect attempt 1 of "), "each attempt is logged: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("rtmp://127.0.0.1:\(server.port)/live/****"), "the URL is shown masked: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("connected again"), r.stderr)

        // The parallel recording lost nothing.
        let (v, a) = try packetCounts(file)
        XCTAssertEqual(v, 210)
        XCTAssertEqual(Double(a), (48000.0 * 7 / 1024).rounded(.up), accuracy: 2)
        XCTAssertEqual(try Tools.decodeErrors(file), "")

        server.stop()
        let files = try server.recordedFiles()
        let second = try XCTUnwrap(files.last)
        XCTAssertGreaterThanOrEqual(files.count, 2, "a recording before and after the restart: \(files)")
        let (v2, a2) = try packetCounts(second)
        XCTAssertGreaterThan(v2, 30, "the second publish carries video")
        XCTAssertGreaterThan(a2, 40, "the second publish carries audio")
        XCTAssertEqual(try Tools.decodeErrors(second), "", "the second recording starts at a keyframe with fresh headers")
    }

    /// A URL output whose server is not there never holds up the file recording.
    func testDeadServerDoesNotBlockTheRecording() throws {
        let port = try Network.freePort()
        let file = "\(dir)/rec.asf"
        let r = try Tools.livemux(["record", "--no-realtime", "--size", "160x120", "-t", "2", "--reconnect-attempts", "2",
                                   "--reconnect-delay", "0.1", "-o", file, "-o", "rtmp://127.0.0.1:\(port)/live/\(key)"], timeout: 30)
        XCTAssertFalse(r.stderr.contains(key), r.stderr)
        XCTAssertTrue(r.stderr.contains("rtmp://127.0.0.1:\(port)/live/****"), r.stderr)
        XCTAssertEqual(try packetCounts(file).video, 60)
        // Every output's fate on the last line, and exit 1: a script knows one output failed.
        XCTAssertEqual(r.status, 1, r.stderr)
        let last = try XCTUnwrap(r.stderr.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(last.hasPrefix("error: 1 of 2 outputs failed: \(file) complete; rtmp://127.0.0.1:\(port)/live/**** stopped: "), last)
        XCTAssertTrue(last.hasSuffix(": Connection refused (check that the server is up and the URL is right)"), last)
    }

    /// TCP (FLV) and SRT with a passphrase (ASF) to ffmpeg listening on loopback; a third output to
    /// an SRT listener that refuses the passphrase fails alone, at once (SRTEncryptionTests has
    /// the details), and the passphrase is never printed.
    func testTCPAndSRTOutputs() throws {
        let (tcp, srt, refusing) = (try Network.freePort(), try Network.freePort(), try Network.freePort())
        let secret = "pass\(key)"
        let tcpViewer = try ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "tcp://127.0.0.1:\(tcp)?listen=1",
                                                  "-c", "copy", "\(dir)/tcp.flv"], directory: dir, name: "tcp")
        let srtViewer = try ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "srt://127.0.0.1:\(srt)?mode=listener&passphrase=\(secret)",
                                                  "-c", "copy", "-f", "asf", "\(dir)/srt.asf"], directory: dir, name: "srt")
        let refuser = try ChildProcess.background("ffmpeg", ["-nostdin", "-v", "quiet", "-i", "srt://127.0.0.1:\(refusing)?mode=listener&timeout=8000000",
                                                "-f", "null", "-"], directory: dir, name: "refuser")
        defer { refuser.end(signal: SIGKILL) }
        XCTAssertTrue(waitUntil(deadline: 10) { Network.isListening(tcp: tcp) && Network.isBound(udp: srt) && Network.isBound(udp: refusing) },
                      "the three listeners are up")
        // -v: FFmpeg's own log is on, and its protocols print the URLs they open.
        let r = try Tools.livemux(["record", "-v", "--size", "160x120", "-t", "2", "--reconnect-attempts", "1", "--reconnect-delay", "0.1",
                                   "-f", "flv", "-o", "tcp://127.0.0.1:\(tcp)",
                                   "-f", "asf", "-o", "srt://127.0.0.1:\(srt)?passphrase=\(secret)",
                                   "-o", "srt://127.0.0.1:\(refusing)?passphrase=\(secret)"], timeout: 30)
        XCTAssertEqual(r.status, 1, "one output failed: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("error: 1 of 3 outputs failed: tcp://127.0.0.1:\(tcp) complete; "
                                        + "srt://127.0.0.1:\(srt)?passphrase=**** complete; srt://127.0.0.1:\(refusing)?passphrase=**** stopped: "
                                        + "the SRT peer refused the passphrase"), "a refused passphrase is not retried: \(r.stderr)")
        XCTAssertFalse(r.stderr.contains(key), "the passphrase is never printed, not even by FFmpeg's log: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("srt://127.0.0.1:\(refusing)?passphrase=**** stopped"), r.stderr)
        tcpViewer.finish(within: 10)
        srtViewer.finish(within: 10)
        for path in ["\(dir)/tcp.flv", "\(dir)/srt.asf"] {
            let (v, a) = try packetCounts(path)
            XCTAssertEqual(v, 60, path)
            XCTAssertEqual(Double(a), (48000.0 * 2 / 1024).rounded(.up), accuracy: 2, path)
            XCTAssertEqual(try Tools.decodeErrors(path), "", path)
        }
    }

    /// A TCP server that accepts and never reads: its output drops video (counted in the progress
    /// line) while the file recording beside it keeps every frame at real-time speed.
    func testSlowOutputDropsVideoAndNeverSlowsTheRecording() throws {
        let port = try Network.freePort()
        let sink = try ChildProcess.background("python3", ["-c", """
            import socket, time
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.bind(("127.0.0.1", \(port))); s.listen(4); s.settimeout(0.2)
            conns, end = [], time.time() + 20
            while time.time() < end:
                try: conns.append(s.accept()[0])
                except socket.timeout: pass
            """], directory: dir, name: "sink")
        defer { sink.end(signal: SIGKILL) }
        waitUntil(deadline: 5) { Network.canConnect(port: port) }
        let file = "\(dir)/rec.flv"
        let r = try Tools.livemux(["record", "--size", "640x360", "--vbitrate", "4M", "-t", "8", "--output-queue", "32",
                                   "-o", file, "-f", "flv", "-o", "tcp://127.0.0.1:\(port)"], timeout: 40)
        // Loopback buffers may take the rest (exit 0); if the write is still blocked 3 s after the
        // end, the output never got its end, and the run says so and fails.
        if r.status != 0 {
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.hasSuffix("error: 1 of 2 outputs failed: \(file) complete; tcp://127.0.0.1:\(port) stopped: "
                                             + "abandoned, still sending 3 s after the end (the receiver reads too slowly)\n"), r.stderr)
        }
        XCTAssertTrue(r.stderr.contains("output-dropped="), "drops are shown in the progress line: \(r.stderr)")
        XCTAssertLessThan(r.seconds, 8 + 6, "the stuck output is abandoned at the end, not waited for")
        XCTAssertEqual(try packetCounts(file).video, 240, "the recording lost nothing")
        XCTAssertEqual(try Tools.decodeErrors(file), "")
    }

    func testBadURLOutputsAreRefused() throws {
        let r = try Tools.livemux(["record", "-t", "1", "-o", "nosuch://host/\(key)"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.hasPrefix("error: cannot write to nosuch://"), r.stderr)
        let rtmpASF = try Tools.livemux(["record", "-t", "1", "-f", "asf", "-o", "rtmp://h/live/\(key)"])
        XCTAssertEqual(rtmpASF.status, 64)
        XCTAssertTrue(rtmpASF.stderr.contains("RTMP carries FLV only"), rtmpASF.stderr)
        XCTAssertFalse(rtmpASF.stderr.contains(key), rtmpASF.stderr)
        // No application and stream key: refused at once, not retried as a bare I/O error.
        for command in [["record", "-t", "1"], ["mux", "--input", "\(dir)/clip.mp4"]] {
            let noKey = try Tools.livemux(command + ["-o", "rtmp://127.0.0.1:1935"])
            XCTAssertEqual(noKey.status, 64, noKey.stderr)
            XCTAssertEqual(noKey.stderr, "error: rtmp://127.0.0.1:1935 needs an application and a stream key: rtmp://HOST[:PORT]/APP/KEY\n")
        }
    }

    /// `livemux serve`: concurrent viewers of /live.flv and /live.asf decode; a late joiner starts
    /// at a keyframe; a viewer that reads nothing stalls nobody; bad requests get 4xx, not a crash.
    func testServeToConcurrentViewers() throws {
        let port = try Network.freePort()
        let base = "http://127.0.0.1:\(port)"
        var viewers: [ChildProcess] = []
        var late: ChildProcess?
        var replies: [String] = []
        var stalled: Int32 = -1
        let seconds = 5.0
        let r = try Tools.livemux(["serve", "--listen", "127.0.0.1:\(port)", "--size", "320x240", "--vbitrate", "3M",
                                   "--output-queue", "64", "-t", String(seconds), "-o", "\(dir)/rec.asf"], timeout: 40) { _ in
            waitUntil(deadline: 5) { Network.canConnect(port: port) }
            // A viewer that asks and then never reads.
            stalled = Network.connect(port: port)
            _ = Array("GET /live.flv HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { send(stalled, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            viewers.append(try! ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "\(base)/live.flv", "-c", "copy", "\(self.dir)/v1.flv"],
                                           directory: self.dir, name: "v1"))
            viewers.append(try! ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "\(base)/live.asf", "-c", "copy", "-f", "asf", "\(self.dir)/v2.asf"],
                                           directory: self.dir, name: "v2"))
            viewers.append(try! ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-i", "\(base)/live.flv", "-f", "null", "-"],
                                           directory: self.dir, name: "v3"))
            // Malformed and unknown requests, answered while the stream goes on.
            replies.append(Network.exchange(port: port, Array("GET /nothing HTTP/1.1\r\n\r\n".utf8)))
            replies.append(Network.exchange(port: port, Array("\u{1}\u{2}garbage\r\n\r\n".utf8)))
            replies.append(Network.exchange(port: port, [UInt8](repeating: 65, count: 20000)))
            replies.append(Network.exchange(port: port, Array("POST /live.flv HTTP/1.1\r\n\r\n".utf8)))
            usleep(2_600_000)  // the late viewer joins mid-stream, as asserted
            late = try? ChildProcess.background("ffprobe", ["-v", "error", "-of", "json", "-show_packets", "-read_intervals", "%+0.5", "\(base)/live.flv"],
                                   directory: self.dir, name: "late")
        }
        if stalled >= 0 { close(stalled) }
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(r.seconds, seconds + 5, "nothing stalled the pipeline")
        XCTAssertTrue(replies[0].hasPrefix("HTTP/1.1 404"), replies[0])
        XCTAssertTrue(replies[1].hasPrefix("HTTP/1.1 400"), replies[1])
        XCTAssertTrue(replies[2].hasPrefix("HTTP/1.1 400"), replies[2])
        XCTAssertTrue(replies[3].hasPrefix("HTTP/1.1 405"), replies[3])

        for v in viewers { v.finish(within: 10) }
        XCTAssertEqual(viewers[2].stderrFile, "", "the decoding viewer saw no errors")
        for (path, opts) in [("\(dir)/v1.flv", [String]()), ("\(dir)/v2.asf", [])] {
            let (v, a) = try packetCounts(path)
            XCTAssertGreaterThanOrEqual(Double(v), 0.95 * 30 * seconds, path)
            XCTAssertGreaterThanOrEqual(Double(a), 0.95 * 48000 * seconds / 1024, path)
            XCTAssertEqual(try Tools.decodeErrors(path, inputOptions: opts), "", path)
        }
        // The recording beside the server has every frame.
        XCTAssertEqual(try packetCounts("\(dir)/rec.asf").video, 150)

        let lateProbe = try XCTUnwrap(late)
        lateProbe.finish(within: 10)
        struct Packets: Decodable { let packets: [Probe.Packet]? }
        let packets = try JSONDecoder().decode(Packets.self, from: lateProbe.stdoutFile).packets ?? []
        let firstVideo = try XCTUnwrap(packets.first { $0.stream_index == 0 }, lateProbe.stderrFile)
        XCTAssertTrue(firstVideo.flags.hasPrefix("K"), "a late viewer starts at a keyframe: \(firstVideo)")
        XCTAssertGreaterThan(Double(firstVideo.dts_time ?? "0") ?? 0, 1.0, "the late viewer joined mid-stream")
    }
}
