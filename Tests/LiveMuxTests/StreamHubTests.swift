import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import LiveMux

final class StreamHubTests: XCTestCase {
    func socketPair() throws -> (hub: Int32, client: Int32) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        return (fds[0], fds[1])
    }

    /// `close` used to shut down every viewer it saw when it began, also one that had left (and
    /// closed its descriptor) while it waited for a slow one: whatever had been given that number
    /// since, here a new socket, was cut off.
    func testCloseLeavesAloneTheDescriptorOfAViewerThatLeft() throws {
        let hub = StreamHub(name: "/live.flv", contentType: "video/x-flv", queueLimit: 512, countDropped: { _ in })
        try hub.write(Chunk(kind: .header, bytes: [0x46, 0x4C, 0x56]))
        let quick = try socketPair(), slow = try socketPair()
        let quickDone = DispatchSemaphore(value: 0), closed = DispatchSemaphore(value: 0)
        Thread.detachNewThread { hub.serveViewer(quick.hub, chunked: false); quickDone.signal() }
        Thread.detachNewThread { hub.serveViewer(slow.hub, chunked: false) }
        // The quick viewer's client reads everything; the slow one's reads nothing.
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while buffer.withUnsafeMutableBytes({ recv(quick.client, $0.baseAddress, $0.count, 0) }) > 0 {}
        }
        for _ in 0..<200 where hub.viewerCount < 2 { usleep(10_000) }
        XCTAssertEqual(hub.viewerCount, 2)
        // More than a socket buffer holds: the slow viewer blocks in send, so close waits its 2 s.
        try hub.write(Chunk(kind: .media(stream: .video, dts: 0, isKeyframe: true), bytes: [UInt8](repeating: 7, count: 4 << 20)))
        Thread.detachNewThread { try? hub.close(); closed.signal() }

        // The quick viewer ends at close and closes its descriptor; a new socket takes the number.
        XCTAssertEqual(quickDone.wait(timeout: .now() + 5), .success)
        let fresh = try socketPair()
        if fresh.hub != quick.hub {
            XCTAssertEqual(dup2(fresh.hub, quick.hub), quick.hub)
            Glibc.close(fresh.hub)
        }
        XCTAssertEqual(closed.wait(timeout: .now()), .timedOut, "close must still be waiting for the slow viewer")
        XCTAssertEqual(closed.wait(timeout: .now() + 10), .success)

        var byte: UInt8 = 1
        XCTAssertEqual(send(quick.hub, &byte, 1, Int32(MSG_NOSIGNAL)), 1, "the new socket was shut down by the hub")
        // Shut down, the slow viewer's send fails and its thread leaves the hub.
        let cutOff = Date().addingTimeInterval(2)
        while hub.viewerCount > 0 && Date() < cutOff { usleep(10_000) }
        XCTAssertEqual(hub.viewerCount, 0, "the slow viewer was cut off")
        for fd in [quick.hub, quick.client, slow.client, fresh.client] { Glibc.close(fd) }
    }
}
