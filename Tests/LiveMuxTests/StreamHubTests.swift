import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import LiveMux

/// The hub and the server's event loop on socket pairs handed to it (`adopt`): what a viewer
/// receives, byte for byte, and what happens to one that reads nothing.
final class StreamHubTests: XCTestCase {
    func viewer(of server: HTTPServer, request: String) throws -> Int32 {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        _ = Array(request.utf8).withUnsafeBytes { send(fds[1], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        server.adopt(fds[0])
        return fds[1]
    }

    /// Reads until the server closes (or 10 s pass).
    static func readAll(_ fd: Int32) -> [UInt8] {
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return all }
            all += buffer[..<n]
        }
    }

    /// An HTTP/1.0 viewer gets the head and then every byte the muxer wrote, in order; one that
    /// reads nothing is cut off after its bounded backlog; the muxer's writes never wait for either.
    func testViewerGetsEveryByteAndAStalledOneIsCutOff() throws {
        let hub = StreamHub(name: "/live.flv", contentType: "video/x-flv", queueLimit: 64, countDropped: { _ in })
        let server = try HTTPServer(address: ListenAddress(host: "127.0.0.1", port: 0), routes: ["/live.flv": hub])
        server.start()
        defer { server.stop() }
        let reader = try viewer(of: server, request: "GET /live.flv HTTP/1.0\r\n\r\n")
        let stalled = try viewer(of: server, request: "GET /live.flv HTTP/1.1\r\n\r\n")
        defer { close(reader); close(stalled) }
        final class Received: @unchecked Sendable { var bytes: [UInt8] = [] }  // written before `done`, read after
        let received = Received()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { received.bytes = Self.readAll(reader); done.signal() }

        var expected: [UInt8] = []
        var slowest = 0.0
        func write(_ kind: Chunk.Kind, _ bytes: [UInt8]) throws {
            let started = Date()
            try hub.write(Chunk(kind: kind, bytes: bytes))
            slowest = max(slowest, Date().timeIntervalSince(started))
            expected += bytes
        }
        try write(.header, Array("FLV-header".utf8))
        // 2000 chunks of 4 KiB (8 MB), keyframes only, so nothing may be dropped for the reader.
        for i in 0..<2000 {
            try write(.media(stream: .video, dts: Int64(i), isKeyframe: true), [UInt8](repeating: UInt8(i % 251), count: 4096))
            if i % 20 == 0 { usleep(5_000) }  // at most 20 chunks a take: fewer than the 256 of the hard limit
        }
        try write(.trailer, Array("end".utf8))
        try hub.close()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertLessThan(slowest, 0.05, "a write only queues")

        let text = String(decoding: received.bytes.prefix(200), as: UTF8.self)
        let headText = text[..<(try XCTUnwrap(text.range(of: "\r\n\r\n"))).lowerBound]
        XCTAssertTrue(headText.hasPrefix("HTTP/1.1 200 OK"), String(headText))
        XCTAssertTrue(headText.contains("Access-Control-Allow-Origin: *"), String(headText))
        XCTAssertFalse(headText.contains("chunked"), "an HTTP/1.0 viewer reads to the close")
        let body = Array(received.bytes.dropFirst(headText.utf8.count + 4))
        XCTAssertEqual(body.count, expected.count)
        XCTAssertTrue(body == expected, "every byte, in order")

        // The stalled viewer was cut off long before its 8 MB: what it can still read is bounded.
        let stalledBytes = Self.readAll(stalled).count
        XCTAssertLessThan(stalledBytes, 4 << 20, "cut off after a bounded backlog")
    }
}
