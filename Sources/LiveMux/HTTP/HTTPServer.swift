import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on non-blocking POSIX sockets that streams live containers to thousands of
/// viewers from one event-loop thread (epoll, `EventPoll`): it accepts, reads each request head
/// (bounded in size and time, so a slow or malformed client holds nothing but a descriptor for
/// a few seconds), answers, and writes every viewer's backlog as its socket takes it. Streams come
/// from `StreamHub`s, which wake the loop when the muxer writes. The `Dashboard`'s endpoints
/// (`/stats`, `/events`, `/history`, `/snapshot.jpg`, the page at `/`) go through the same
/// `route`. Its `HTTPListener` accepts, its `HTTPConnectionTable` holds the connections. What other threads reach lives in `control`;
/// everything else belongs to the loop thread.
final class HTTPServer: @unchecked Sendable {
    let address: ListenAddress
    let maxViewers: Int
    /// Who may watch (nil: everyone who reaches the port).
    let access: ViewerAccess?
    /// Said once at start when the descriptor limit cannot hold `maxViewers` viewers.
    let warning: String?
    let dashboard: Dashboard
    /// The control API under `/api` (nil: off, `/api` is an unknown path), and the thread that
    /// answers it.
    let controlAPI: ControlAPI?
    private let controlWorker: ControlWorker?
    private let fanOuts: [String: StreamFanOut]
    /// HLS of the browsers' stream (`/live.m3u8`), when the session makes one.
    private let hls: HLSPlaylist?
    private let listener: HTTPListener
    private let events: EventPoll
    private struct Control {
        var running = false
        var stopping = false
        /// Sockets handed over by `adopt`, for the loop to take.
        var adopted: [Int32] = []
        /// The event loop's thread, from `start`, joined by `stop`.
        var loop: WorkerThread?
    }
    private let control = Locked(Control())
    // The loop's state.
    private let connections: HTTPConnectionTable
    private var nextExpiry = Date()
    private var scratch = [UInt8](repeating: 0, count: 16 << 10)
    /// `/events` readers, by token (closed ones are dropped when next published to).
    private var subscribers: Set<UInt64> = []
    /// Connections waiting for the control API's answer, by token (the others waiting want a snapshot).
    private var controlWaiters: Set<UInt64> = []

    static let defaultMaxViewers = 1000
    /// Descriptors the rest of the process needs (files, devices, pipes).
    static let reservedDescriptors = 64
    static let tickMilliseconds: Int32 = 250
    static let acceptsPerWake = 256
    private static let listenerToken = UInt64.max - 1

    /// Binds and listens (so a busy port fails before anything is recorded); `start` runs the loop.
    /// `address` is then the one bound: port 0 becomes the port the kernel chose. `option` names
    /// where the address came from, for the hint of a failure.
    init(address: ListenAddress, option: String = "--listen", routes: [String: StreamHub], hls: HLSPlaylist? = nil, maxViewers: Int = defaultMaxViewers, access: ViewerAccess? = nil,
         dashboard: Dashboard = Dashboard(statistics: { StatisticsSnapshot() }), control: ControlAPI? = nil) throws {
        self.maxViewers = maxViewers
        controlAPI = control
        self.access = access
        self.dashboard = dashboard
        fanOuts = routes.mapValues { StreamFanOut(hub: $0) }
        self.hls = hls
        let limit = FileLimit.raiseToHard()
        let needed = maxViewers + HTTPConnectionTable.maxPendingConnections + Self.reservedDescriptors
        if let limit, limit < needed {
            warning = "the open-file limit (\(limit)) is too low for --max-viewers \(maxViewers): about \(max(0, limit - HTTPConnectionTable.maxPendingConnections - Self.reservedDescriptors)) viewers fit (raise the hard limit: ulimit -Hn \(needed), or LimitNOFILE=)"
        } else {
            warning = nil
        }
        do {
            events = try EventPoll()
        } catch {
            throw LiveMuxError.output("cannot create the HTTP server's event loop: \(error.message)")
        }
        let listener = try HTTPListener(address: address, option: option)
        do {
            try events.add(listener.fd, token: Self.listenerToken, edgeTriggered: false, writable: false)
        } catch {
            listener.close()  // it was never watched: the error below says why
            throw LiveMuxError.output("cannot create the HTTP server's event loop: \(error.message)")
        }
        self.address = listener.address
        self.listener = listener
        listener.reserve()
        connections = HTTPConnectionTable(events: events)
        controlWorker = control.map { [events] in ControlWorker(api: $0, wake: { events.wake() }) }
    }

    /// A server that never ran (its session failed to build) still holds its sockets: free them.
    deinit { stop() }

    /// The URL of each stream players open, FLV first, with the viewer key when there is one. The
    /// browsers' stream is not among them: the dashboard's URL is a browser's (its page plays it).
    var viewerURLs: [String] {
        fanOuts.keys.filter { $0 != BrowserStream.path }.sorted { $0.hasSuffix(".flv") && !$1.hasSuffix(".flv") }.map(url)
    }

    /// The dashboard's page, with the viewer key when there is one (without it: 403).
    var dashboardURL: String { url("/") }

    /// The browsers' stream and its HLS playlist, when the session makes them (not for HEVC).
    var browserURLs: [String] {
        guard let fan = fanOuts[BrowserStream.path], !fan.hub.isClosed else { return [] }
        return [url(BrowserStream.path)] + (hls != nil ? [url(HLSPlaylist.playlistPath)] : [])
    }

    /// A URL of this server that passes `access`: the key's query when there is one.
    private func url(_ path: String) -> String {
        "http://\(address.description)\(path)" + (access.map { "?" + $0.keyQuery } ?? "")
    }

    func start() {
        let starts = control.withLock { c in
            guard !c.running && !c.stopping else { return false }
            c.running = true
            return true
        }
        guard starts else { return }
        // Only a running loop wakes for the hubs (and lets their `close` wait for their viewers).
        for fan in fanOuts.values { fan.hub.attach(wake: { [events] in events.wake() }) }
        let thread = WorkerThread.spawn("livemux-http") { [self] in run() }
        control.withLock { $0.loop = thread }
    }

    /// Stops the loop, closes every connection and the listening socket.
    func stop() {
        let already = control.withLock { c in
            defer { c.stopping = true }
            return c.stopping
        }
        guard !already else { return }
        events.wake()
        control.withLock { $0.loop }?.join()
        listener.close()
    }

    /// Hands the running loop a connected socket, as if it had been accepted (scripts/fuzz feeds
    /// untrusted bytes through the whole connection path this way). The server closes it.
    func adopt(_ fd: Int32) {
        control.withLock { $0.adopted.append(fd) }
        events.wake()
    }

    private func run() {
        defer {
            controlWorker?.stop()
            dashboard.stop()
            for fan in fanOuts.values { fan.hub.attach(wake: nil) }
            for c in connections.all { connections.close(c) }
            for fan in fanOuts.values { fan.reportDrainedIfDone() }
        }
        while true {
            let ready = events.wait(timeoutMs: Self.tickMilliseconds)
            let now = Date()
            let (stop, handed) = control.withLock { c in
                defer { c.adopted = [] }
                return (c.stopping, c.adopted)
            }
            if stop { return }
            for fd in handed { connections.register(fd, now: now) }
            for event in ready {
                switch event.token {
                case EventPoll.wakeToken: break
                case Self.listenerToken: acceptAll(now: now)
                default: handle(event, now: now)
                }
            }
            distribute(now: now)  // cheap when nothing is new; so no wake can be missed
            deliverSnapshots(now: now)
            deliverControlAnswers(now: now)
            if dashboard.tick(now: now) { publish(now: now) }
            if now >= nextExpiry { expire(now: now) }
        }
    }

    // MARK: Connections

    private func acceptAll(now: Date) {
        for _ in 0..<Self.acceptsPerWake {
            switch listener.accept() {
            case .done(let fd): connections.register(fd, now: now)
            case .wouldBlock: return  // none left
            case .failed(let error) where error.errno == ECONNABORTED: continue  // that client left already
            case .failed(let error) where error.errno == EMFILE || error.errno == ENFILE:
                // Out of descriptors: drop the oldest half-sent request, else refuse this one with 503.
                if connections.dropOldestPending() { continue }
                guard listener.refuseOne() else { return }
            case .failed: return
            }
        }
    }

    private func handle(_ event: EventPoll.Event, now: Date) {
        guard let c = connections[event.token] else { return }
        switch c.phase {
        case .waiting:
            if event.failed { connections.close(c) }  // else its answer comes from `deliverSnapshots`
        case .reading:
            switch c.readRequest(&scratch) {
            case .waiting: if event.failed { connections.close(c) }
            case .request(let head, let body): route(c, head: head, body: body, now: now)
            case .bad: answer(c, HTTPResponse.text("400 Bad Request", body: "bad request\n"), now: now)
            case .tooLarge: answer(c, HTTPResponse.text("413 Content Too Large", body: "the body is too large\n"), now: now)
            case .closed: connections.close(c)
            }
        case .answering:
            if event.failed { connections.close(c) } else if event.writable { flush(c, now: now) }
        case .lingering:
            if c.drain(&scratch) { connections.close(c) }
        case .viewing, .subscribed:
            // A viewer sends nothing after its request: an end or an error means it left.
            if event.failed || (event.readable && c.drain(&scratch)) { connections.close(c) } else if event.writable { flush(c, now: now) }
        }
    }

    private func answer(_ c: HTTPConnection, _ bytes: [UInt8], now: Date) {
        c.answer(bytes, now: now)
        flush(c, now: now)
    }

    private func flush(_ c: HTTPConnection, now: Date) {
        switch c.flush(now: now) {
        case .blocked, .idle: break
        case .failed: connections.close(c)
        case .finished:
            // An answer is written: linger for the client's close. A viewer's stream is over.
            if c.phase != .lingering || c.drain(&scratch) { connections.close(c) }
        }
    }

    /// Answers a complete request.
    private func route(_ c: HTTPConnection, head: [UInt8], body: [UInt8], now: Date) {
        guard let request = HTTPRequest.parse(head) else {
            return answer(c, HTTPResponse.text("400 Bad Request", body: "bad request\n"), now: now)
        }
        // The control API has a key of its own, which a viewer key never stands in for.
        if let controlWorker, ControlAPI.isAPI(request.path) {
            // Answered by the worker, so nothing a change does (a device's open) holds up the loop.
            controlWaiters.insert(c.token)
            c.wait(until: now.addingTimeInterval(ControlWorker.answerTimeoutSeconds))
            return controlWorker.submit(.init(token: c.token, method: request.method, path: request.path,
                                              authorization: request.authorization, body: body))
        }
        let headOnly = request.method == "HEAD"
        // The one access check: every path, every method, before anything else is answered.
        if let access, !access.allows(path: request.path, query: request.query) {
            return answer(c, HTTPResponse.text("403 Forbidden", body: "forbidden: this server needs ?key=KEY or a signed link (?expires=T&sig=HMAC)\n",
                                               head: headOnly), now: now)
        }
        // A browser's CORS preflight; one for an unknown path gets the 404 below.
        if request.method == "OPTIONS" && (request.path == "/" || fanOuts[request.path] != nil || Dashboard.paths.contains(request.path)
                                           || (hls != nil && HLSPlaylist.serves(request.path))) {
            return answer(c, HTTPResponse.preflight(requestedHeaders: request.requestedHeaders), now: now)
        }
        guard request.method == "GET" || headOnly || request.method == "OPTIONS" else {
            return answer(c, HTTPResponse.text("405 Method Not Allowed", body: "only GET, HEAD and OPTIONS\n",
                                               extra: "Allow: \(HTTPResponse.methods)\r\n"), now: now)
        }
        if request.path == "/" && request.wantsHTML {
            // The page's own requests carry what let this one in (a signed link: remade for every path).
            let stream = fanOuts[BrowserStream.path].flatMap { $0.ended ? nil : BrowserStream.path }
            let page = DashboardPage.page(access: access?.pageQuery(for: request.query) ?? "", stream: stream)
            return answer(c, HTTPResponse.text("200 OK", body: page, contentType: "text/html; charset=utf-8",
                                               extra: "Cache-Control: no-cache\r\n", head: headOnly), now: now)
        }
        if Dashboard.paths.contains(request.path) { return routeDashboard(c, request, now: now) }
        if let hls, HLSPlaylist.serves(request.path) {
            guard let (body, type) = hls.answer(request.path, query: access?.pageQuery(for: request.query) ?? "") else {
                return answer(c, HTTPResponse.text("404 Not Found", body: "no such segment (yet, or any more): read \(HLSPlaylist.playlistPath)\n",
                                                   extra: HTTPResponse.live, head: headOnly), now: now)
            }
            return answer(c, HTTPResponse.bytes("200 OK", body: body, contentType: type, extra: HTTPResponse.live, head: headOnly), now: now)
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
        guard connections.viewerCount < maxViewers else {
            return answer(c, HTTPResponse.text("503 Service Unavailable", body: "too many viewers: at most \(maxViewers) (--max-viewers)\n", head: headOnly), now: now)
        }
        let streamHead = HTTPResponse.streamHead(contentType: fan.hub.contentType, chunked: request.isHTTP11)
        if headOnly { return answer(c, streamHead, now: now) }
        let viewer = StreamViewer(fd: c.fd, chunked: request.isHTTP11, queueLimit: fan.hub.queueLimit)
        guard fan.join(viewer, token: c.token) else {
            return answer(c, HTTPResponse.text("503 Service Unavailable", body: "the stream has ended\n"), now: now)
        }
        c.view(streamHead, viewer: viewer, of: fan)
        connections.becameViewer()
        flush(c, now: now)
    }

    /// `/stats`, `/events`, `/history` and `/snapshot.jpg`.
    private func routeDashboard(_ c: HTTPConnection, _ request: HTTPRequest, now: Date) {
        let headOnly = request.method == "HEAD"
        switch request.path {
        case "/stats":
            let body = dashboard.statsLine(viewers: index) + "\n"
            answer(c, HTTPResponse.text("200 OK", body: body, contentType: "application/json", extra: HTTPResponse.live, head: headOnly), now: now)
        case "/history":
            answer(c, HTTPResponse.text("200 OK", body: dashboard.historyJSON + "\n", contentType: "application/json",
                                        extra: HTTPResponse.live, head: headOnly), now: now)
        case "/events":
            guard connections.subscriberCount < Dashboard.maxEventReaders else {
                return answer(c, HTTPResponse.text("503 Service Unavailable", body: "too many event readers: at most \(Dashboard.maxEventReaders)\n", head: headOnly), now: now)
            }
            if headOnly { return answer(c, HTTPResponse.eventStreamHead, now: now) }
            c.subscribe(HTTPResponse.eventStreamHead + dashboard.event(viewers: index))
            connections.becameSubscriber()
            subscribers.insert(c.token)
            flush(c, now: now)
        default:  // "/snapshot.jpg"
            var width = 0
            if let given = request.queryValue("width") {
                guard let w = Int(given), Dashboard.snapshotWidths.contains(w) else {
                    return answer(c, HTTPResponse.text("400 Bad Request", body: "width takes \(Dashboard.snapshotWidths.lowerBound) to \(Dashboard.snapshotWidths.upperBound) pixels, not '\(given)'\n", head: headOnly), now: now)
                }
                width = w
            }
            guard dashboard.hasVideo else {
                return answer(c, HTTPResponse.text("404 Not Found", body: "no video in this recording\n", head: headOnly), now: now)
            }
            if let jpeg = dashboard.snapshot(width: width, for: (c.token, headOnly), now: now, wake: { [events] in events.wake() }) {
                return answer(c, HTTPResponse.bytes("200 OK", body: jpeg, contentType: "image/jpeg", extra: HTTPResponse.live, head: headOnly), now: now)
            }
            c.wait(until: now.addingTimeInterval(Dashboard.snapshotTimeoutSeconds))
        }
    }

    /// Answers the requests waiting for the pictures the snapshot thread made.
    private func deliverSnapshots(now: Date) {
        for (result, waiters) in dashboard.finishedSnapshots(now: now) {
            for waiter in waiters {
                guard let c = connections[waiter.token], c.phase == .waiting else { continue }
                switch result {
                case .jpeg(let jpeg):
                    answer(c, HTTPResponse.bytes("200 OK", body: jpeg, contentType: "image/jpeg", extra: HTTPResponse.live, head: waiter.head), now: now)
                case .failed(let why):
                    answer(c, HTTPResponse.text("503 Service Unavailable", body: why + "\n", head: waiter.head), now: now)
                }
            }
        }
    }

    /// Answers the requests whose control API answer is ready (a connection that left gets none).
    private func deliverControlAnswers(now: Date) {
        guard let controlWorker else { return }
        for (token, bytes) in controlWorker.answers() {
            guard controlWaiters.remove(token) != nil, let c = connections[token], c.phase == .waiting else { continue }
            answer(c, bytes, now: now)
        }
    }

    /// Sends every event reader the new second's object; a reader still sending the last one misses it.
    private func publish(now: Date) {
        guard !subscribers.isEmpty else { return }
        let event = dashboard.event(viewers: index)
        for token in subscribers {
            guard let c = connections[token] else {
                subscribers.remove(token)
                continue
            }
            if c.offer(event) { flush(c, now: now) }
        }
    }

    private var index: StreamIndex {
        let entries = fanOuts.values.sorted { $0.hub.name < $1.hub.name }.map {
            StreamIndex.Entry(path: $0.hub.name, contentType: $0.hub.contentType, codecs: $0.hub.streamCodecs, viewers: $0.viewers.count)
        }
        return StreamIndex(streams: entries, viewers: connections.viewerCount, maxViewers: maxViewers)
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
                    if viewer.overflowed { connections.close(c) } else { flush(c, now: now) }
                }
                if dropped > 0 { fan.hub.countDropped(dropped) }
            }
            if let closedAt = fan.closedAt, now.timeIntervalSince(closedAt) > StreamHub.closeGraceSeconds {
                for token in fan.viewers.keys { if let c = connections[token] { connections.close(c) } }
            }
            fan.reportDrainedIfDone()
        }
    }

    /// Closes connections past their deadline: a request not complete in time gets 400.
    private func expire(now: Date) {
        nextExpiry = now.addingTimeInterval(Double(Self.tickMilliseconds) / 1000)
        for c in connections.all where !c.isLongLived && c.deadline <= now {
            switch c.phase {
            case .reading: answer(c, HTTPResponse.text("400 Bad Request", body: "bad request\n"), now: now)
            case .waiting where controlWaiters.remove(c.token) != nil:
                answer(c, HTTPResponse.text("503 Service Unavailable", body: "the job did not answer in time\n"), now: now)
            case .waiting: answer(c, HTTPResponse.text("503 Service Unavailable", body: "no snapshot in time\n"), now: now)
            default: connections.close(c)
            }
        }
        connections.compact()
    }
}
