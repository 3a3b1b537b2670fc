import Foundation
import XCTest
import POSIX
#if canImport(Glibc)
import Glibc
#endif
@testable import LiveMux

/// The reconnect state machine of a URL output (`NetworkSink`'s writer thread), against a real
/// loopback TCP port: refused while the test's socket is bound but not listening, accepted once
/// it listens. Attempts are counted from the first failure and the output is given up after the
/// policy's number; a connection made again sends fresh headers and starts at the newest keyframe.
final class ReconnectTests: XCTestCase {
    static let deadline = 10.0

    /// A loopback TCP socket bound to a free port and not listening yet: connections are refused
    /// until `listen`, and no other program can take the port meanwhile.
    final class Port: @unchecked Sendable {
        let fd: Int32
        let number: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard fd >= 0, bound else {
                close(fd)
                throw LiveMuxError.output("cannot bind a loopback port: errno \(errno)")
            }
            number = Int(UInt16(bigEndian: address.sin_port))
        }

        /// Listens, accepts one connection and reads it to its end (or 10 s).
        func acceptAndRead() -> [UInt8] {
            guard listen(fd, 1) == 0 else { return [] }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return [] }
            defer { close(connection) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var all: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return all }
                all += buffer[..<n]
            }
        }

        deinit { close(fd) }
    }

    /// What a sink reported, and a wait for a line.
    final class Reports: @unchecked Sendable {
        private let condition = NSCondition()
        private var lines: [String] = []  // guarded by `condition`
        func append(_ line: String) { condition.withLock { lines.append(line); condition.broadcast() } }
        var all: [String] { condition.withLock { lines } }

        /// Waits up to `seconds` for a line containing `text`; whether one came.
        func wait(for text: String, seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            condition.lock()
            defer { condition.unlock() }
            while !lines.contains(where: { $0.contains(text) }) {
                if !condition.wait(until: deadline) { return lines.contains { $0.contains(text) } }
            }
            return true
        }
    }

    final class Dropped: Sendable {
        private let n = Locked(0)
        func add(_ k: Int) { n.withLock { $0 += k } }
        var count: Int { n.withLock { $0 } }
    }

    static func media(_ stream: StreamKind, _ dts: Int64, key: Bool = false, _ text: String) -> Chunk {
        Chunk(kind: .media(stream: stream, dts: dts, isKeyframe: key), bytes: Array(text.utf8))
    }

    /// Writes audio every 10 ms until `write` throws: the output was given up. The error, or nil
    /// after the deadline.
    func failure(of sink: NetworkSink) -> Error? {
        var dts: Int64 = 0
        var failure: Error?
        waitUntil(deadline: Self.deadline, every: 0.01) {
            do { try sink.write(Self.media(.audio, dts, "a")) } catch { failure = error; return true }
            dts += 21
            return false
        }
        return failure
    }

    func testGivesUpAfterThePolicysAttemptsCountedFromTheFirstFailure() throws {
        let port = try Port(), reports = Reports()
        let url = "tcp://127.0.0.1:\(port.number)"
        let sink = NetworkSink(url: url, id: OutputID(0), policy: ReconnectPolicy(firstDelay: 0.01, maxDelay: 0.02, attempts: 3), queueLimit: 16,
                               report: { reports.append($0) }, countDropped: { _ in })
        try sink.write(Chunk(kind: .header, bytes: Array("header".utf8)))
        sink.start()
        let error = try XCTUnwrap(failure(of: sink), "given up within \(Self.deadline) s")
        XCTAssertEqual("\(error)".contains("\(url): gave up after 3 reconnect attempts: Connection refused"), true, "\(error)")
        XCTAssertEqual(reports.all.map { $0.replacingOccurrences(of: #" in \d+\.\d s$"#, with: "", options: .regularExpression) },
                       (1...3).map { "output \(url): Connection refused; reconnect attempt \($0) of 3" })
        XCTAssertThrowsError(try sink.close(), "close says it too")
    }

    func testNoAttemptsGivesUpAtTheFirstFailure() throws {
        let port = try Port(), reports = Reports()
        let sink = NetworkSink(url: "tcp://127.0.0.1:\(port.number)", id: OutputID(0), policy: ReconnectPolicy(firstDelay: 0.01, maxDelay: 0.01, attempts: 0),
                               queueLimit: 16, report: { reports.append($0) }, countDropped: { _ in })
        try sink.write(Chunk(kind: .header, bytes: [1]))
        sink.start()
        let error = try XCTUnwrap(failure(of: sink))
        XCTAssertFalse("\(error)".contains("gave up"), "\(error)")
        XCTAssertTrue("\(error)".contains("Connection refused (check that the server is up and the URL is right)"), "\(error)")
        XCTAssertEqual(reports.all, [], "no attempt announced")
        XCTAssertThrowsError(try sink.close())
    }

    /// Refused first, then accepted: the connection gets the header again and the queue from its
    /// newest keyframe (what came before is stale), then the rest and the trailer.
    func testAConnectionMadeAgainStartsWithTheHeaderAtTheNewestKeyframe() throws {
        let port = try Port(), reports = Reports(), dropped = Dropped()
        let url = "tcp://127.0.0.1:\(port.number)"
        let sink = NetworkSink(url: url, id: OutputID(0), policy: ReconnectPolicy(firstDelay: 0.3, maxDelay: 0.3, attempts: 20), queueLimit: 64,
                               report: { reports.append($0) }, countDropped: { dropped.add($0) })
        // Queued before the writer starts, so all of it waits for the first connection.
        try sink.write(Chunk(kind: .header, bytes: Array("H|".utf8)))
        for chunk in [Self.media(.video, 0, key: true, "v0|"), Self.media(.audio, 10, "a10|"), Self.media(.video, 33, "v33|"),
                      Self.media(.video, 66, key: true, "v66|"), Self.media(.audio, 70, "a70|")] {
            try sink.write(chunk)
        }
        sink.start()
        XCTAssertTrue(reports.wait(for: "reconnect attempt 1 of 20", seconds: Self.deadline), "\(reports.all)")
        final class Received: @unchecked Sendable { var bytes: [UInt8] = [] }  // written before the thread ends
        let received = Received()
        let server = WatchedThread("server") { received.bytes = port.acceptAndRead() }
        XCTAssertTrue(reports.wait(for: "connected again at reconnect attempt", seconds: Self.deadline), "\(reports.all)")
        try sink.write(Self.media(.video, 99, "v99|"))
        try sink.write(Chunk(kind: .trailer, bytes: Array("T".utf8)))
        try sink.close()
        XCTAssertTrue(server.finishes(within: Self.deadline))
        XCTAssertEqual(String(decoding: received.bytes, as: UTF8.self), "H|v66|a70|v99|T")
        XCTAssertEqual(dropped.count, 3, "v0, a10 and v33 were stale")
    }
}
