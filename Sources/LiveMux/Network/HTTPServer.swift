import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on non-blocking POSIX sockets that streams live containers to thousands of
/// viewers from one event-loop thread (epoll, `EventPoll`): it accepts, reads each request head
/// (bounded in size and time, so a slow or malformed client holds nothing but a descriptor for
/// a few seconds), answers, and writes every viewer's backlog as its socket takes it. Streams come
/// from `StreamHub`s, which wake the loop when the muxer writes. Locking: `lock` guards `stopping`
/// and `adopted`; everything else belongs to the loop thread.
final class HTTPServer: @unchecked Sendable {
    let address: ListenAddress
    let maxViewers: Int
    /// Said once at start when the descriptor limit cannot hold `maxViewers` viewers.
    let warning: String?
    private let fanOuts: [String: StreamFanOut]
    private let listener: Int32
    private let events: EventPoll
    private let lock = NSLock()
    private var stopping = false
    private var adopted: [Int32] = []
    private var running = false
    /// The event loop's thread, from `start` (guarded by `lock`), joined by `stop`.
    private var loop: WorkerThread?
    // The loop's state.
    private var connections: [UInt64: HTTPConnection] = [:]
    /// Connections that are not viewers, oldest first (closed ones are skipped lazily).
    private var pendingOrder: [UInt64] = []
    private var pendingHead = 0
    private var pendingCount = 0
    private var viewerCount = 0
    private var nextToken: UInt64 = 1
    private var nextExpiry = Date()
    /// Kept open so that at the descriptor limit one can be freed to refuse a connection politely.
    private var reserveFD: Int32
    private var scratch = [UInt8](repeating: 0, count: 16 << 10)

    static let defaultMaxViewers = 1000
    /// Connections still sending their request (or being answered); past it the oldest is dropped.
    static let maxPendingConnections = 1024
    /// Descriptors the rest of the process needs (files, devices, pipes).
    static let reservedDescriptors = 64
    static let listenBacklog: Int32 = 4096
    /// Bounds what the kernel buffers for one viewer (it would autotune to megabytes on loopback),
    /// so a viewer that stops reading shows in its backlog within seconds.
    static let viewerSendBuffer: Int32 = 256 << 10
    static let tickMilliseconds: Int32 = 250
    static let acceptsPerWake = 256
    private static let listenerToken = UInt64.max - 1

    /// Binds and listens (so a busy port fails before anything is recorded); `start` runs the loop.
    /// `address` is then the one bound: port 0 becomes the port the kernel chose.
    init(address: ListenAddress, routes: [String: StreamHub], maxViewers: Int = defaultMaxViewers) throws {
        self.maxViewers = maxViewers
        fanOuts = routes.mapValues { StreamFanOut(hub: $0) }
        let limit = FileLimit.raiseToHard()
        let needed = maxViewers + Self.maxPendingConnections + Self.reservedDescriptors
        if let limit, limit < needed {
            warning = "the open-file limit (\(limit)) is too low for --max-viewers \(maxViewers): about \(max(0, limit - Self.maxPendingConnections - Self.reservedDescriptors)) viewers fit (raise the hard limit: ulimit -Hn \(needed), or LimitNOFILE=)"
        } else {
            warning = nil
        }
        do {
            events = try EventPoll()
        } catch {
            throw LiveMuxError.output("cannot create the HTTP server's event loop: \(error.message)")
        }
        guard let (family, bytes) = address.socketAddress() else {
            throw LiveMuxError.invalid("cannot listen on \(address.description): not an IPv4 or IPv6 address")
        }
        let fd: Int32
        do {
            fd = try syscall(where: "socket") {
                socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            }
        } catch {
            throw LiveMuxError.output("cannot create a socket: \(error.message)")
        }
        var storage = address.socketStorage(bytes)
        do throws(SystemCallError) {
            try Self.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            // [::1] means IPv6 loopback only, not also IPv4 through mapped addresses.
            if family == AF_INET6 { try Self.setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
            try syscall(where: "bind") {
                withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.socketLength) } }
            }
            try syscall(where: "listen") { listen(fd, Self.listenBacklog) }
            // The port sits at the same offset in sockaddr_in and sockaddr_in6.
            var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
            try syscall(where: "getsockname") {
                withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) } }
            }
        } catch {
            try? closeDescriptor(fd)  // it never listened: the error below says why
            throw LiveMuxError.output("cannot listen on \(address.description): \(error.message) (\(Self.listenHint(error.errno, address)))")
        }
        do {
            try events.add(fd, token: Self.listenerToken, edgeTriggered: false, writable: false)
        } catch {
            try? closeDescriptor(fd)  // it was never watched: the error below says why
            throw LiveMuxError.output("cannot create the HTTP server's event loop: \(error.message)")
        }
        let port = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        self.address = ListenAddress(host: address.host, port: port)
        listener = fd
        reserveFD = Self.openReserve()
    }

    /// What to do about a failed bind or listen: the port for a busy one, the address for one
    /// this machine does not have (EADDRNOTAVAIL).
    private static func listenHint(_ code: Int32, _ address: ListenAddress) -> String {
        switch code {
        case EADDRINUSE: return "choose another --listen port"
        case EADDRNOTAVAIL: return "no interface of this machine has the address \(address.host): listen on one of its own addresses, 127.0.0.1, or 0.0.0.0 for all"
        case EACCES where address.port < 1024: return "ports below 1024 need privileges: choose a port from 1024 on"
        default: return "check the --listen address and port"
        }
    }

    /// A server that never ran (its session failed to build) still holds its sockets: free them.
    deinit { stop() }

    /// The URL of each stream viewers can open, FLV first.
    var viewerURLs: [String] { fanOuts.keys.sorted { $0.hasSuffix(".flv") && !$1.hasSuffix(".flv") }.map { "http://\(address.description)\($0)" } }

    func start() {
        lock.lock()
        guard !running && !stopping else { lock.unlock(); return }
        running = true
        lock.unlock()
        // Only a running loop wakes for the hubs (and lets their `close` wait for their viewers).
        for fan in fanOuts.values { fan.hub.attach(wake: { [events] in events.wake() }) }
        let thread = WorkerThread.spawn("livemux-http") { [self] in run() }
        lock.withLock { loop = thread }
    }

    /// Stops the loop, closes every connection and the listening socket.
    func stop() {
        lock.lock()
        let already = stopping
        stopping = true
        lock.unlock()
        guard !already else { return }
        events.wake()
        lock.withLock { loop }?.join()
        // Closed once, at the end: a failure would leave nothing to undo.
        try? closeDescriptor(listener)
        if reserveFD >= 0 { try? closeDescriptor(reserveFD) }
    }

    /// Hands the running loop a connected socket, as if it had been accepted (scripts/fuzz feeds
    /// untrusted bytes through the whole connection path this way). The server closes it.
    func adopt(_ fd: Int32) {
        lock.lock()
        adopted.append(fd)
        lock.unlock()
        events.wake()
    }

    private func run() {
        defer {
            for fan in fanOuts.values { fan.hub.attach(wake: nil) }
            for c in Array(connections.values) { close(c) }
            for fan in fanOuts.values { fan.reportDrainedIfDone() }
        }
        while true {
            let ready = events.wait(timeoutMs: Self.tickMilliseconds)
            let now = Date()
            lock.lock()
            let stop = stopping
            let handed = adopted
            adopted = []
            lock.unlock()
            if stop { return }
            for fd in handed { register(fd, now: now) }
            for event in ready {
                switch event.token {
                case EventPoll.wakeToken: break
                case Self.listenerToken: acceptAll(now: now)
                default: handle(event, now: now)
                }
            }
            distribute(now: now)  // cheap when nothing is new; so no wake can be missed
            if now >= nextExpiry { expire(now: now) }
        }
    }

    // MARK: Connections

    private func acceptAll(now: Date) {
        for _ in 0..<Self.acceptsPerWake {
            switch nonBlockingSyscall(where: "accept", { accept(listener, nil, nil) }) {
            case .done(let fd): register(fd, now: now)
            case .wouldBlock: return  // none left
            case .failed(let error) where error.errno == ECONNABORTED: continue  // that client left already
            case .failed(let error) where error.errno == EMFILE || error.errno == ENFILE:
                // Out of descriptors: drop the oldest half-sent request, else refuse this one with 503.
                if dropOldestPending() { continue }
                guard reserveFD >= 0 else { return }
                try? closeDescriptor(reserveFD)  // freed to make room: nothing else to do with it
                if case .done(let refused) = nonBlockingSyscall(where: "accept", { accept(listener, nil, nil) }) {
                    let busy = HTTPResponse.text("503 Service Unavailable", body: "too many connections\n")
                    // Best effort: a client that cannot take these few bytes at once just sees the close.
                    _ = busy.withUnsafeBytes { b in
                        nonBlockingSyscall(where: "send") { send(refused, b.baseAddress, b.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                    }
                    try? closeDescriptor(refused)  // the 503 was all it gets either way
                }
                reserveFD = Self.openReserve()
            case .failed: return
            }
        }
    }

    /// A descriptor to free at the limit; -1 when there is none to spare (connections past the
    /// limit then wait in the backlog instead of getting 503).
    private static func openReserve() -> Int32 {
        (try? syscall(where: "open") { open("/dev/null", O_RDONLY | O_CLOEXEC) }) ?? -1
    }

    private func register(_ fd: Int32, now: Date) {
        let token = nextToken
        do throws(SystemCallError) {
            // The loop's sockets do not block, and no child process inherits one.
            let flags = try syscall(where: "fcntl") { fcntl(fd, F_GETFL) }
            try syscall(where: "fcntl") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
            try syscall(where: "fcntl") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // Both best effort: an adopted Unix socket has no Nagle to turn off, and with the
            // kernel's own buffer a viewer that stops reading only shows in its backlog later.
            try? Self.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            try? Self.setOption(fd, SOL_SOCKET, SO_SNDBUF, Self.viewerSendBuffer)
            try events.add(fd, token: token, edgeTriggered: true)
        } catch {
            try? closeDescriptor(fd)  // a socket the loop cannot serve: its client sees it closed
            return
        }
        nextToken += 1
        if pendingCount >= Self.maxPendingConnections { _ = dropOldestPending() }
        let connection = HTTPConnection(fd: fd, token: token, now: now)
        connections[token] = connection
        pendingOrder.append(token)
        pendingCount += 1
    }

    private func dropOldestPending() -> Bool {
        while pendingHead < pendingOrder.count {
            let token = pendingOrder[pendingHead]
            pendingHead += 1
            if let c = connections[token], c.phase != .viewing {
                close(c)
                return true
            }
        }
        return false
    }

    private func close(_ c: HTTPConnection) {
        guard connections.removeValue(forKey: c.token) != nil else { return }
        if c.phase == .viewing {
            c.fanOut?.remove(c.token)
            viewerCount -= 1
        } else {
            pendingCount -= 1
        }
        try? closeDescriptor(c.fd)  // the connection is over whatever close says
    }

    private func handle(_ event: EventPoll.Event, now: Date) {
        guard let c = connections[event.token] else { return }
        switch c.phase {
        case .reading:
            switch c.readRequest(&scratch) {
            case .waiting: if event.failed { close(c) }
            case .head(let head): route(c, head: head, now: now)
            case .bad: answer(c, HTTPResponse.text("400 Bad Request", body: "bad request\n"), now: now)
            case .closed: close(c)
            }
        case .answering:
            if event.failed { close(c) } else if event.writable { flush(c, now: now) }
        case .lingering:
            if c.drain(&scratch) { close(c) }
        case .viewing:
            // A viewer sends nothing after its request: an end or an error means it left.
            if event.failed || (event.readable && c.drain(&scratch)) { close(c) } else if event.writable { flush(c, now: now) }
        }
    }

    private func answer(_ c: HTTPConnection, _ bytes: [UInt8], now: Date) {
        c.answer(bytes, now: now)
        flush(c, now: now)
    }

    private func flush(_ c: HTTPConnection, now: Date) {
        switch c.flush(now: now) {
        case .blocked, .idle: break
        case .failed: close(c)
        case .finished:
            // An answer is written: linger for the client's close. A viewer's stream is over.
            if c.phase != .lingering || c.drain(&scratch) { close(c) }
        }
    }

    /// Answers a complete request head.
    private func route(_ c: HTTPConnection, head: [UInt8], now: Date) {
        guard let request = HTTPRequest.parse(head) else {
            return answer(c, HTTPResponse.text("400 Bad Request", body: "bad request\n"), now: now)
        }
        let headOnly = request.method == "HEAD"
        // A browser's CORS preflight; one for an unknown path gets the 404 below.
        if request.method == "OPTIONS" && (request.path == "/" || fanOuts[request.path] != nil) {
            return answer(c, HTTPResponse.preflight(requestedHeaders: request.requestedHeaders), now: now)
        }
        guard request.method == "GET" || headOnly || request.method == "OPTIONS" else {
            return answer(c, HTTPResponse.text("405 Method Not Allowed", body: "only GET, HEAD and OPTIONS\n",
                                               extra: "Allow: \(HTTPResponse.methods)\r\n"), now: now)
        }
        if request.path == "/" {
            let index = self.index
            let (body, type) = request.wantsJSON ? (index.json, "application/json") : (index.text, "text/plain; charset=utf-8")
            return answer(c, HTTPResponse.text("200 OK", body: body, contentType: type, extra: HTTPResponse.allowOrigin, head: headOnly), now: now)
        }
        guard let fan = fanOuts[request.path] else {
            let paths = fanOuts.keys.sorted().joined(separator: " ")
            return answer(c, HTTPResponse.text("404 Not Found", body: "not found; streams: \(paths) (and / lists them)\n", head: headOnly), now: now)
        }
        guard viewerCount < maxViewers else {
            return answer(c, HTTPResponse.text("503 Service Unavailable", body: "too many viewers: at most \(maxViewers) (--max-viewers)\n", head: headOnly), now: now)
        }
        let streamHead = HTTPResponse.streamHead(contentType: fan.hub.contentType, chunked: request.isHTTP11)
        if headOnly { return answer(c, streamHead, now: now) }
        let viewer = StreamViewer(fd: c.fd, chunked: request.isHTTP11, queueLimit: fan.hub.queueLimit)
        guard fan.join(viewer, token: c.token) else {
            return answer(c, HTTPResponse.text("503 Service Unavailable", body: "the stream has ended\n"), now: now)
        }
        c.view(streamHead, viewer: viewer, of: fan)
        pendingCount -= 1
        viewerCount += 1
        flush(c, now: now)
    }

    private var index: StreamIndex {
        let entries = fanOuts.values.sorted { $0.hub.name < $1.hub.name }.map {
            StreamIndex.Entry(path: $0.hub.name, contentType: $0.hub.contentType, codecs: $0.hub.streamCodecs, viewers: $0.viewers.count)
        }
        return StreamIndex(streams: entries, viewers: viewerCount, maxViewers: maxViewers)
    }

    // MARK: Streams and time

    /// Hands every viewer what its stream's muxer wrote since the last call, and writes it.
    private func distribute(now: Date) {
        for fan in fanOuts.values {
            let (chunks, closing) = fan.absorb(now: now)
            if !chunks.isEmpty || closing {
                var dropped = 0
                for (token, viewer) in fan.viewers {
                    for chunk in chunks { dropped += viewer.push(chunk) }
                    if closing { viewer.end() }
                    guard let c = connections[token] else { continue }
                    // A viewer whose backlog passed the hard limit reads nothing: cut it off.
                    if viewer.overflowed { close(c) } else { flush(c, now: now) }
                }
                if dropped > 0 { fan.hub.countDropped(dropped) }
            }
            if let closedAt = fan.closedAt, now.timeIntervalSince(closedAt) > StreamHub.closeGraceSeconds {
                for token in fan.viewers.keys { if let c = connections[token] { close(c) } }
            }
            fan.reportDrainedIfDone()
        }
    }

    /// Closes connections past their deadline: a request not complete in time gets 400.
    private func expire(now: Date) {
        nextExpiry = now.addingTimeInterval(Double(Self.tickMilliseconds) / 1000)
        for c in Array(connections.values) where c.phase != .viewing && c.deadline <= now {
            if c.phase == .reading { answer(c, HTTPResponse.text("400 Bad Request", body: "bad request\n"), now: now) } else { close(c) }
        }
        while pendingHead < pendingOrder.count, (connections[pendingOrder[pendingHead]]?.phase ?? .viewing) == .viewing {
            pendingHead += 1
        }
        if pendingHead > 1024 && pendingHead * 2 > pendingOrder.count {
            pendingOrder.removeFirst(pendingHead)
            pendingHead = 0
        }
    }

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SystemCallError) {
        var v = value
        try syscall(where: "setsockopt") { setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) }
    }
}
