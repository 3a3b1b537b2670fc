import Foundation
import XCTest

/// Many HTTP viewers from this one process: non-blocking sockets that each ask for a stream and
/// read it, all served by one `poll` loop on a thread of its own, until the server closes them.
/// Keeps every byte of a few viewers (to decode them) and the byte count of all.
final class ViewerSwarm: @unchecked Sendable {
    struct Viewer {
        var fd: Int32
        var bytes = 0
        var kept: [UInt8]? = nil
        var open = true
    }

    private let lock = NSLock()
    private var viewers: [Viewer] = []
    private let done = DispatchSemaphore(value: 0)

    /// Connects `count` viewers of `path` (HTTP/1.1, so chunked) and starts reading; the viewers
    /// at `keep` have their bytes kept.
    init(port: Int, path: String, count: Int, keep: Set<Int> = []) {
        Network.raiseFileLimit()
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        for i in 0..<count {
            let fd = Network.connect(port: port)
            guard fd >= 0 else { continue }
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            viewers.append(Viewer(fd: fd, kept: keep.contains(i) ? [] : nil))
        }
        Thread.detachNewThread { [self] in run() }
    }

    var connected: Int { lock.lock(); defer { lock.unlock() }; return viewers.count }
    var stillOpen: Int { lock.lock(); defer { lock.unlock() }; return viewers.filter(\.open).count }

    /// Waits until every viewer was closed by the server (or `timeout` passes); the bytes of each.
    func wait(timeout: Double) -> [Int] {
        _ = done.wait(timeout: .now() + timeout)
        lock.lock()
        defer { lock.unlock() }
        for i in viewers.indices where viewers[i].open {
            close(viewers[i].fd)
            viewers[i].open = false
        }
        return viewers.map(\.bytes)
    }

    /// The kept bytes of viewer `i` (after `wait`).
    func kept(_ i: Int) -> [UInt8] { lock.lock(); defer { lock.unlock() }; return viewers[i].kept ?? [] }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            lock.lock()
            let open = viewers.indices.filter { viewers[$0].open }
            var fds = open.map { pollfd(fd: viewers[$0].fd, events: Int16(POLLIN), revents: 0) }
            lock.unlock()
            if open.isEmpty { done.signal(); return }
            guard poll(&fds, nfds_t(fds.count), 200) > 0 else { continue }
            lock.lock()
            for (k, i) in open.enumerated() where fds[k].revents != 0 && viewers[i].open {
                let n = buffer.withUnsafeMutableBytes { recv(viewers[i].fd, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    viewers[i].bytes += n
                    viewers[i].kept? += buffer[..<n]
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    close(viewers[i].fd)
                    viewers[i].open = false
                }
            }
            lock.unlock()
        }
    }

    /// The body of an HTTP/1.1 chunked response (head included in `raw`); nil when it is not one
    /// or does not end with the last chunk (the stream did not end cleanly).
    static func dechunk(_ raw: [UInt8]) -> [UInt8]? {
        let crlf: [UInt8] = [13, 10]
        func line(from i: Int) -> (String, Int)? {
            var j = i
            while j + 1 < raw.count && !(raw[j] == 13 && raw[j + 1] == 10) { j += 1 }
            guard j + 1 < raw.count else { return nil }
            return (String(decoding: raw[i..<j], as: UTF8.self), j + 2)
        }
        var i = 0
        // The head: lines up to the blank one.
        while true {
            guard let (text, next) = line(from: i) else { return nil }
            i = next
            if text.isEmpty { break }
        }
        var body: [UInt8] = []
        while true {
            guard let (size, next) = line(from: i), let n = Int(size, radix: 16), next + n + 2 <= raw.count else { return nil }
            if n == 0 { return body }
            body += raw[next..<next + n]
            guard Array(raw[next + n..<next + n + 2]) == crlf else { return nil }
            i = next + n + 2
        }
    }
}
