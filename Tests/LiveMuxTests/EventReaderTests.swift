import Foundation
import XCTest
@testable import LiveMux
#if canImport(Glibc)
import Glibc
#endif

/// An `/events` reader on a real socket pair: an event goes out only once the socket took the
/// last one, so a reader that stops reading holds one event, not a growing queue, and gets the
/// next second's event once it reads again.
final class EventReaderTests: XCTestCase {
    func testASlowReaderMissesEventsInsteadOfQueueingThem() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        var small: Int32 = 4096
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        XCTAssertEqual(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK), 0)
        let reader = HTTPConnection(fd: fds[0], token: 1, now: Date())
        reader.subscribe(HTTPResponse.eventStreamHead)
        XCTAssertEqual(reader.flush(now: Date()), .idle)
        XCTAssertTrue(reader.isLongLived)

        let event = Array("data: {\"media_time_s\":1}\n\n".utf8) + [UInt8](repeating: 32, count: 8000)
        var offered = 0, dropped = 0
        for _ in 0..<100 {
            if reader.offer(event) {
                offered += 1
                _ = reader.flush(now: Date())
            } else {
                dropped += 1
            }
        }
        XCTAssertGreaterThan(dropped, 80, "the peer reads nothing: events are dropped, not queued")
        XCTAssertLessThan(offered, 20)

        // The peer reads everything: the one event held goes out, and the next is taken again.
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var received = 0
        while true {
            let n = recv(fds[1], &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { received += n; continue }
            if reader.flush(now: Date()) == .idle, recv(fds[1], &buffer, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK)) <= 0 { break }
        }
        XCTAssertEqual(received, HTTPResponse.eventStreamHead.count + offered * event.count, "whole events only")
        XCTAssertTrue(reader.offer(event))
    }
}
