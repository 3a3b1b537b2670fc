import XCTest
import POSIX
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

    /// Reads until the server closes (or nothing comes for 10 s).
    static func read(_ fd: Int32, into received: Received) {
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            received.append(buffer[..<n])
        }
    }

    /// Bytes a viewer received, as they come (appended by its reading thread, read by the test).
    final class Received: Sendable {
        private let received = Locked<[UInt8]>([])
        func append(_ more: ArraySlice<UInt8>) { received.withLock { $0 += more } }
        var bytes: [UInt8] { received.withLock { $0 } }
        var count: Int { received.withLock { $0.count } }
    }

    /// Chunks the writer lets the reading viewer fall behind: under the queue limit (64), past
    /// which a slow viewer's queued video is dropped to a keyframe (96 lost the tail 2 times in 6),
    /// and far under the 256 past which it is cut off, so only the stalled viewer is.
    static let chunksAhead = 32

    /// An HTTP/1.0 viewer gets the head and then every byte the muxer wrote, in order; one that
    /// reads nothing is cut off after its bounded backlog; the muxer's writes never wait for either:
    /// all of them end, within a deadline, while the stalled viewer reads nothing.
    func testViewerGetsEveryByteAndAStalledOneIsCutOff() throws {
        let hub = StreamHub(name: "/live.flv", contentType: "video/x-flv", queueLimit: 64, countDropped: { _ in })
        let server = try HTTPServer(address: ListenAddress(host: "127.0.0.1", port: 0), routes: ["/live.flv": hub])
        server.start()
        defer { server.stop() }
        let reader = try viewer(of: server, request: "GET /live.flv HTTP/1.0\r\n\r\n")
        let stalled = try viewer(of: server, request: "GET /live.flv HTTP/1.1\r\n\r\n")
        defer { close(reader); close(stalled) }
        let received = Received()
        let reading = WatchedThread("reader") { Self.read(reader, into: received) }

        final class Written: @unchecked Sendable { var bytes: [UInt8] = [] }  // written by the writer, read after it ended
        let written = Written(), errors = ErrorBox()
        let chunkSize = 4096
        let writer = WatchedThread("muxer") {
            func write(_ kind: Chunk.Kind, _ bytes: [UInt8]) throws {
                try hub.write(Chunk(kind: kind, bytes: bytes))
                written.bytes += bytes
            }
            do {
                try write(.header, Array("FLV-header".utf8))
                // The loop takes an adopted socket when it next wakes: a reader that joined late
                // would start at the cached keyframe, without the chunks written before it.
                // Its response head comes once it has joined.
                guard waitUntil(deadline: MuxQueueTests.deadline, every: 0.001, condition: { received.count > 0 }) else {
                    throw LiveMuxError.output("the reading viewer never got its response head")
                }
                // 2000 chunks of 4 KiB (8 MB), keyframes only, so nothing may be dropped for the reader,
                // which is let fall behind by at most `chunksAhead` chunks.
                for i in 0..<2000 {
                    let caughtUp = waitUntil(deadline: MuxQueueTests.deadline, every: 0.001) {
                        received.count + Self.chunksAhead * chunkSize >= written.bytes.count
                    }
                    guard caughtUp else { throw LiveMuxError.output("the reading viewer stopped at \(received.count) bytes") }
                    try write(.media(stream: .video, dts: Int64(i), isKeyframe: true), [UInt8](repeating: UInt8(i % 251), count: chunkSize))
                }
                try write(.trailer, Array("end".utf8))
                try hub.close()
            } catch { errors.set(error) }
        }
        XCTAssertTrue(writer.finishes(within: 6 * MuxQueueTests.deadline), "the writes waited for a viewer")
        XCTAssertNil(errors.error)
        XCTAssertTrue(reading.finishes(within: MuxQueueTests.deadline), "the server closed the reader")
        let expected = written.bytes

        let text = String(decoding: received.bytes.prefix(200), as: UTF8.self)
        let headText = text[..<(try XCTUnwrap(text.range(of: "\r\n\r\n"))).lowerBound]
        XCTAssertTrue(headText.hasPrefix("HTTP/1.1 200 OK"), String(headText))
        XCTAssertTrue(headText.contains("Access-Control-Allow-Origin: *"), String(headText))
        XCTAssertFalse(headText.contains("chunked"), "an HTTP/1.0 viewer reads to the close")
        let body = Array(received.bytes.dropFirst(headText.utf8.count + 4))
        XCTAssertEqual(body.count, expected.count)
        XCTAssertTrue(body == expected, "every byte, in order")

        // The stalled viewer was cut off long before its 8 MB: what it can still read is bounded.
        let rest = Received()
        Self.read(stalled, into: rest)
        let stalledBytes = rest.count
        XCTAssertLessThan(stalledBytes, 4 << 20, "cut off after a bounded backlog")
    }
}
