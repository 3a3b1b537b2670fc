import Foundation
import XCTest

/// `livemux serve` with many viewers from this one process (issue 14): all of them get the whole
/// stream and it decodes; a viewer that stops reading is cut off while the others and a recording
/// keep every frame; a burst of 10,000 connection attempts and 1,000 idle connections crash
/// nothing and stall nothing; HEAD, CORS, the index and --max-viewers.
final class ServeScaleTests: TemporaryDirectoryTestCase {
    /// Starts `serve` on a free port; the port.
    func serve(_ arguments: [String]) throws -> (ServingLivemux, Int) {
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0"] + arguments, directory: dir)
        let url = try XCTUnwrap(serve.viewerURLs()?.first, serve.stderr)
        let port = try XCTUnwrap(Int(url.split(separator: ":").last?.split(separator: "/").first ?? ""))
        return (serve, port)
    }

    /// The index as JSON: viewers of each stream by path.
    func viewerCounts(port: Int) throws -> [String: Int] {
        let reply = Network.get(port: port, "/", headers: "Accept: application/json\r\n")
        let body = try XCTUnwrap(reply.range(of: "\r\n\r\n").map { reply[$0.upperBound...] }, reply)
        struct Index: Decodable { struct Stream: Decodable { let path: String; let viewers: Int }; let streams: [Stream] }
        let index = try JSONDecoder().decode(Index.self, from: Data(body.utf8))
        return Dictionary(uniqueKeysWithValues: index.streams.map { ($0.path, $0.viewers) })
    }

    /// A viewer's bytes as a file: its chunked body, which must end with the last chunk.
    func save(_ raw: [UInt8], _ name: String) throws -> String {
        let body = try XCTUnwrap(ViewerSwarm.dechunk(raw), "\(name): a complete chunked stream (\(raw.count) bytes)")
        let path = "\(dir)/\(name).flv"
        try Data(body).write(to: URL(fileURLWithPath: path))
        return path
    }

    func videoPackets(_ path: String) throws -> Int { try Tools.probe(path).stream("video")?.packetCount ?? 0 }

    func testThreeHundredViewersEachGetTheWholeStreamAndItDecodes() throws {
        let seconds = 6
        let (serve, port) = try serve(["-t", "\(seconds)", "--size", "640x360", "--vbitrate", "500k", "-o", "\(dir)/rec.asf"])
        let swarm = ViewerSwarm(port: port, path: "/live.flv", count: 300, keep: [0, 150, 299])
        XCTAssertEqual(swarm.connected, 300)
        waitUntil(deadline: 4) { (try? viewerCounts(port: port))?["/live.flv"] == 300 }
        XCTAssertEqual(try viewerCounts(port: port)["/live.flv"], 300, "all 300 are served at once")
        let bytes = swarm.wait(timeout: Double(seconds) + 15).sorted()
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
        let median = bytes[bytes.count / 2]
        XCTAssertGreaterThan(median, 200_000, "about 6 s of a 500 kbit/s stream")
        XCTAssertGreaterThanOrEqual(Double(bytes[0]), 0.8 * Double(median), "the slowest viewer got most of what the median got")
        let recorded = try videoPackets("\(dir)/rec.asf")
        XCTAssertEqual(recorded, 30 * seconds, "the recording beside the viewers has every frame")
        for i in [0, 150, 299] {
            let path = try save(swarm.kept(i), "viewer\(i)")
            XCTAssertEqual(try videoPackets(path), recorded, "viewer \(i) got every frame")
            XCTAssertEqual(try Tools.decodeErrors(path), "", "viewer \(i)")
        }
    }

    func testAStalledViewerIsCutOffWhileTheOthersAndTheRecordingKeepEveryFrame() throws {
        let seconds = 6
        let (serve, port) = try serve(["-t", "\(seconds)", "--size", "320x240", "--vbitrate", "3M", "--output-queue", "16",
                                       "-o", "\(dir)/rec.asf"])
        // It asks, with a tiny receive buffer, and then reads nothing.
        let stalled = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_addr.s_addr = inet_addr("127.0.0.1")
        sin.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(stalled, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(connected, 0)
        defer { close(stalled) }
        _ = Array("GET /live.flv HTTP/1.1\r\n\r\n".utf8).withUnsafeBytes { send(stalled, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let swarm = ViewerSwarm(port: port, path: "/live.flv", count: 20, keep: Set(0..<20))
        waitUntil(deadline: 2) { (try? viewerCounts(port: port))?["/live.flv"] == 21 }
        XCTAssertEqual(try viewerCounts(port: port)["/live.flv"], 21, "the stalled viewer is served at first")
        waitUntil(deadline: 4.5) { (try? viewerCounts(port: port))?["/live.flv"] == 20 }
        XCTAssertEqual(try viewerCounts(port: port)["/live.flv"], 20, "then cut off: its backlog is bounded")
        _ = swarm.wait(timeout: 15)
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
        let recorded = try videoPackets("\(dir)/rec.asf")
        XCTAssertEqual(recorded, 30 * seconds)
        for i in 0..<20 {
            let path = try save(swarm.kept(i), "viewer\(i)")
            if i % 5 == 0 { XCTAssertEqual(try videoPackets(path), recorded, "viewer \(i) lost nothing") }
        }
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/viewer0.flv"), "")
    }

    func testConnectionBurstAndIdleConnectionsNeitherCrashTheServerNorStallTheRecording() throws {
        let seconds = 9
        let (serve, port) = try serve(["-t", "\(seconds)", "--size", "320x240", "-o", "\(dir)/rec.asf"])
        let watcher = ViewerSwarm(port: port, path: "/live.flv", count: 1, keep: [0])
        Network.raiseFileLimit()
        // 1,000 connections that send half a request and then nothing (slowloris).
        let idleSince = Date()
        var idle: [Int32] = []
        for _ in 0..<1000 {
            let fd = Network.connect(port: port)
            guard fd >= 0 else { continue }
            _ = Array("GET /live.flv HTT".utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            idle.append(fd)
        }
        XCTAssertEqual(idle.count, 1000)
        defer { idle.forEach { close($0) } }
        // 10,000 connection attempts in a burst: half ask for the stream and leave at once.
        let request = Array("GET /live.flv HTTP/1.1\r\n\r\n".utf8)
        var attempts = 0
        for _ in 0..<10 {
            var batch: [Int32] = []
            for i in 0..<1000 {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                var sin = sockaddr_in()
                sin.sin_family = sa_family_t(AF_INET)
                sin.sin_addr.s_addr = inet_addr("127.0.0.1")
                sin.sin_port = UInt16(port).bigEndian
                _ = withUnsafePointer(to: &sin) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                if i % 2 == 0 { _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
                batch.append(fd)
                attempts += 1
            }
            batch.forEach { close($0) }
        }
        XCTAssertEqual(attempts, 10_000)
        XCTAssertTrue(Network.get(port: port, "/").hasPrefix("HTTP/1.1 200"), "the server answers after the burst")

        // The server closes every idle connection within its 5 s request limit (and a little).
        var buffer = [UInt8](repeating: 0, count: 512)
        var open = idle
        waitUntil(deadline: 6.5 - Date().timeIntervalSince(idleSince)) {
            open = open.filter { fd in
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 { return buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) } < 0 && errno == EAGAIN }
                return n < 0 && errno == EAGAIN
            }
            return open.isEmpty
        }
        XCTAssertEqual(open.count, 0, "idle connections are closed by the server")

        _ = watcher.wait(timeout: Double(seconds) + 10)
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
        XCTAssertEqual(try videoPackets("\(dir)/rec.asf"), 30 * seconds, "the recording kept every frame")
        let path = try save(watcher.kept(0), "watcher")
        XCTAssertEqual(try videoPackets(path), 30 * seconds, "the viewer beside the burst kept every frame")
        XCTAssertEqual(try Tools.decodeErrors(path), "")
    }

    func testHeadCORSIndexAndMaxViewers() throws {
        let (serve, port) = try serve(["-t", "4", "--size", "320x240", "--max-viewers", "2"])
        let head = Network.get(port: port, "/live.flv", method: "HEAD")
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 200 OK\r\n"), head)
        XCTAssertTrue(head.contains("\r\nContent-Type: video/x-flv\r\n"), head)
        XCTAssertTrue(head.contains("\r\nAccess-Control-Allow-Origin: *\r\n"), head)
        XCTAssertTrue(head.hasSuffix("\r\n\r\n"), "HEAD: the head only: \(head.debugDescription)")

        let swarm = ViewerSwarm(port: port, path: "/live.flv", count: 2)
        waitUntil(deadline: 2) { (try? viewerCounts(port: port))?["/live.flv"] == 2 }
        let full = Network.get(port: port, "/live.asf")
        XCTAssertTrue(full.hasPrefix("HTTP/1.1 503"), full)
        XCTAssertTrue(full.contains("at most 2 (--max-viewers)"), full)

        let text = Network.get(port: port, "/")
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.contains("Content-Type: text/plain"), text)
        XCTAssertTrue(text.contains("Access-Control-Allow-Origin: *"), text)
        XCTAssertTrue(text.contains("\n/live.flv video/x-flv h264 320x240, aac 48000 Hz 2 ch, 2 viewers\n"), text)
        XCTAssertTrue(text.contains("\n/live.asf video/x-ms-asf h264 320x240, aac 48000 Hz 2 ch, 0 viewers\n"), text)
        XCTAssertTrue(Network.get(port: port, "/?format=json").contains("\"max_viewers\":2"))
        XCTAssertEqual(try viewerCounts(port: port), ["/live.flv": 2, "/live.asf": 0, "/live.mp4": 0])
        let headIndex = Network.get(port: port, "/", method: "HEAD")
        XCTAssertTrue(headIndex.hasPrefix("HTTP/1.1 200") && headIndex.hasSuffix("\r\n\r\n"), headIndex)
        XCTAssertTrue(Network.get(port: port, "/", method: "POST").hasPrefix("HTTP/1.1 405"))
        XCTAssertTrue(Network.get(port: port, "/live.mkv").hasPrefix("HTTP/1.1 404"))

        let bytes = swarm.wait(timeout: 15)
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
        XCTAssertTrue(bytes.allSatisfy { $0 > 10_000 }, "\(bytes)")
        let refused = try Tools.livemux(["serve", "--max-viewers", "0"])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.stderr.contains("--max-viewers takes a whole number from 1 to 1000000, not '0'"), refused.stderr)
    }
}
