import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on plain POSIX sockets that streams live containers to any number of viewers.
/// One thread accepts; each connection gets its own thread, which reads the request (bounded in
/// size and time, so a slow or malformed client cannot stall anything) and then writes that
/// viewer's queue. Locking: `lock` guards `connections` and `stopping`.
final class HTTPServer: @unchecked Sendable {
    let address: ListenAddress
    private let routes: [String: StreamHub]
    private let listener: Int32
    private let lock = NSLock()
    private var connections = 0
    private var stopping = false
    private let acceptDone = DispatchSemaphore(value: 0)
    static let maxConnections = 64
    static let maxRequestBytes = 8192
    static let requestTimeoutSeconds = 5

    /// Binds and listens (so a busy port fails before anything is recorded); `start` accepts.
    /// `address` is then the one bound: port 0 becomes the port the kernel chose.
    init(address: ListenAddress, routes: [String: StreamHub]) throws {
        self.routes = routes
        guard let (family, bytes) = address.socketAddress() else {
            throw LiveMuxError.invalid("cannot listen on \(address.description): not an IPv4 or IPv6 address")
        }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LiveMuxError.output("cannot create a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        // [::1] means IPv6 loopback only, not also IPv4 through mapped addresses.
        if family == AF_INET6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size)) }
        var storage = address.socketStorage(bytes)
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.socketLength) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(fd)
            throw LiveMuxError.output("cannot listen on \(address.description): \(message) (choose another --listen port)")
        }
        // The port sits at the same offset in sockaddr_in and sockaddr_in6.
        var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) } }
        let port = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        self.address = ListenAddress(host: address.host, port: port)
        listener = fd
    }

    /// The URL of each stream viewers can open, FLV first.
    var viewerURLs: [String] { routes.keys.sorted { $0.hasSuffix(".flv") && !$1.hasSuffix(".flv") }.map { "http://\(address.description)\($0)" } }

    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "livemux-http"
        thread.start()
    }

    /// Stops accepting and closes the listening socket. Viewers end when their hub closes.
    func stop() {
        lock.lock()
        let already = stopping
        stopping = true
        lock.unlock()
        guard !already else { return }
        acceptDone.wait()
        Glibc.close(listener)
    }

    private var isStopping: Bool { lock.lock(); defer { lock.unlock() }; return stopping }

    private func acceptLoop() {
        defer { acceptDone.signal() }
        while !isStopping {
            // poll with a timeout, so `stop` is noticed without closing the socket under accept.
            var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, 200)
            guard ready > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            lock.lock()
            let accepted = connections < Self.maxConnections
            if accepted { connections += 1 }
            lock.unlock()
            guard accepted else {
                Self.respond(client, status: "503 Service Unavailable", body: "too many connections\n")
                Glibc.close(client)
                continue
            }
            let thread = Thread { [self] in
                serve(client)
                lock.lock(); connections -= 1; lock.unlock()
            }
            thread.name = "livemux-http-client"
            thread.start()
        }
    }

    /// Reads one request and answers it; a stream request becomes a viewer until it ends.
    /// Internal (not private) so scripts/fuzz can hand it a socket of untrusted bytes.
    func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: Self.requestTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var noSigpipe: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noSigpipe, socklen_t(MemoryLayout<Int32>.size))
        guard let head = Self.readHead(fd) else {
            Self.respond(fd, status: "400 Bad Request", body: "bad request\n")
            Glibc.close(fd)
            return
        }
        guard let request = HTTPRequest.parse(head) else {
            Self.respond(fd, status: "400 Bad Request", body: "bad request\n")
            Glibc.close(fd)
            return
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            Self.respond(fd, status: "405 Method Not Allowed", body: "only GET and HEAD\n", extra: "Allow: GET, HEAD\r\n")
            Glibc.close(fd)
            return
        }
        guard let hub = routes[request.path] else {
            let paths = routes.keys.sorted().joined(separator: " ")
            Self.respond(fd, status: "404 Not Found", body: "not found; streams: \(paths)\n")
            Glibc.close(fd)
            return
        }
        let framing = request.isHTTP11 ? "Transfer-Encoding: chunked\r\n" : ""
        let head200 = "HTTP/1.1 200 OK\r\nContent-Type: \(hub.contentType)\r\nCache-Control: no-cache\r\n\(framing)Connection: close\r\n\r\n"
        guard Self.sendAll(fd, Array(head200.utf8)), request.method == "GET" else {
            Glibc.close(fd)
            return
        }
        hub.serveViewer(fd, chunked: request.isHTTP11)  // returns when the viewer is gone or the stream ended; closes fd
    }

    /// The request head up to the blank line; nil when the client sends too much, too slowly, or nothing.
    private static func readHead(_ fd: Int32) -> [UInt8]? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let started = Date()
        while head.count < maxRequestBytes {
            if Date().timeIntervalSince(started) > Double(requestTimeoutSeconds) { return nil }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            head.append(contentsOf: buffer[..<n])
            if let end = findBlankLine(head) { return Array(head[..<end]) }
        }
        return nil
    }

    private static func findBlankLine(_ b: [UInt8]) -> Int? {
        guard b.count >= 2 else { return nil }
        for i in 1..<b.count where b[i] == 10 {
            if b[i - 1] == 10 { return i }
            if i >= 3 && b[i - 1] == 13 && b[i - 2] == 10 && b[i - 3] == 13 { return i }
        }
        return nil
    }

    private static func respond(_ fd: Int32, status: String, body: String, extra: String = "") {
        let text = "HTTP/1.1 \(status)\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\(extra)Connection: close\r\n\r\n\(body)"
        _ = sendAll(fd, Array(text.utf8))
    }

    /// Writes everything; false when the viewer is gone. MSG_NOSIGNAL: a closed socket is EPIPE, not a signal.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }
}
