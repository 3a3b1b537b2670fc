import Foundation
import XCTest

/// Nothing a client sends to the control API crashes or stalls the job (issue 39): 10,000
/// requests with random methods, paths, headers and bodies — malformed JSON, wrong types, huge
/// numbers, bytes that are not text, lengths that lie — and a few valid changes among them. The
/// job's file keeps every frame and decodes clean, and the API still answers.
final class ControlAPIFuzzTests: TemporaryDirectoryTestCase {
    static let requests = 10_000

    func testTenThousandRandomRequestsLeaveTheJobWhole() throws {
        let keyFile = "\(dir)/control.key"
        let key = "fuzz-control-key-0123456789abcdef"
        try (key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)
        let file = "\(dir)/a.flv"
        let job = try ServingLivemux(["record", "-q", "-t", "300", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "320x240", "-o", file], directory: dir)
        let url = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let port = try XCTUnwrap(URLComponents(string: url)?.port)
        // LIVEMUX_FUZZ_SEED repeats a printed run.
        let seed = ProcessInfo.processInfo.environment["LIVEMUX_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("control API fuzz: seed \(seed)")
        var random = SplitMix(seed: seed)
        let methods = ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS", "get", "FOO", ""]
        let paths = ["/api", "/api/", "/api/sources/a0", "/api/sources/a1", "/api/sources/v0", "/api/sources/", "/api/sources/a0/x",
                     "/api/outputs", "/api/outputs/o0", "/api/outputs/o1", "/api/outputs/o99999999999999999999", "/api/outputs/o0/reconnect",
                     "/api/segments/cut", "/api/layout", "/api/%00", "/api/../stats", "/api?key=x", "/api/sources/a-1",
                     "/api/sources", "/api/sources/v1", "/api/sources/a2"]
        let fields = ["mute", "volume", "vbitrate", "output", "format", "overwrite", "size", "fps", "vcodec", "abitrate", "", "\u{0}", "mute\"",
                      "video", "audio", "options"]
        let values: [String] = ["true", "false", "0", "1", "-1", "0.5", "1e308", "-1e308", "NaN", "null", "\"800k\"", "\"\"", "[]", "{}",
                                "[true]", "\"\(dir)/x.mp4\"", "\"/proc/x.flv\"", "\"rtmp://\"", "\"999999x999999\"", "\"30000/0\"",
                                "\"\\u0000\"", "12345678901234567890", "\"hevc\"", "\"\(file)\"",
                                "\"lavfi:sine\"", "\"lavfi:testsrc2=size=64x64\"", "\"lavfi:nosuch\"", "\"/dev/zero\"", "{\"x\": 1}"]
        var statuses: [Int: Int] = [:]
        for _ in 0..<Self.requests {
            let method = methods[Int(random.next() % UInt64(methods.count))]
            var path = paths[Int(random.next() % UInt64(paths.count))]
            if random.next() % 10 == 0 { path += String(repeating: "/a", count: Int(random.next() % 50)) }
            var body: [UInt8]
            switch random.next() % 5 {
            case 0: body = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            case 1: body = Array("{\"mute\": tru".utf8)
            case 2: body = []
            default:
                let count = Int(random.next() % 4)
                let pairs = (0..<count).map { _ in
                    "\"\(fields[Int(random.next() % UInt64(fields.count))])\": \(values[Int(random.next() % UInt64(values.count))])"
                }
                body = Array("{\(pairs.joined(separator: ", "))}".utf8)
            }
            var head = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n"
            switch random.next() % 8 {
            case 0: break  // no key
            case 1: head += "Authorization: Bearer wrong\r\n"
            case 2: head += "Authorization: \(key)\r\n"
            default: head += "Authorization: Bearer \(key)\r\n"
            }
            // Lengths that lie (short, long, not a number) as well as true ones.
            switch random.next() % 6 {
            case 0: head += "Content-Length: \(max(0, body.count - 3))\r\n"
            case 1: head += "Content-Length: x\r\n"
            case 2: break
            default: head += "Content-Length: \(body.count)\r\n"
            }
            // (A length longer than the body would hold the connection to the server's 5 s limit.)
            let reply = Network.exchange(port: port, Array((head + "\r\n").utf8) + body, timeout: 6)
            let status = Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
            statuses[status, default: 0] += 1
        }
        print("control API fuzz: answers by status \(statuses.sorted { $0.key < $1.key })")
        print("control API fuzz: livemux said: \(job.stderr)")
        XCTAssertEqual(Network.get(port: port, "/api", headers: "Authorization: Bearer \(key)\r\n").split(separator: " ").dropFirst().first, "200",
                       "seed \(seed): \(job.stderr)")
        job.stop()
        let status = job.wait()
        XCTAssertTrue(status == 0 || status == 1, "seed \(seed): exit \(status): \(job.stderr)")
        XCTAssertEqual(try Tools.decodeErrors(file), "", "seed \(seed)")
        let frames = try XCTUnwrap(try Tools.probe(file).stream("video"), "seed \(seed)").packetCount
        XCTAssertGreaterThan(frames, 30, "seed \(seed)")
    }
}
