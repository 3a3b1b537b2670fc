import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP server's connections by epoll token, with those still short of being a viewer kept
/// oldest first, so the oldest can be dropped at the limit. Used by the loop thread only.
final class HTTPConnectionTable {
    private let events: EventPoll
    private var connections: [UInt64: HTTPConnection] = [:]
    /// Connections that are not viewers, oldest first (closed ones are skipped lazily).
    private var pendingOrder: [UInt64] = []
    private var pendingHead = 0
    private var pendingCount = 0
    private(set) var viewerCount = 0
    /// `/events` readers.
    private(set) var subscriberCount = 0
    private var nextToken: UInt64 = 1

    /// Connections still sending their request (or being answered); past it the oldest is dropped.
    static let maxPendingConnections = 1024
    /// Bounds what the kernel buffers for one viewer (it would autotune to megabytes on loopback),
    /// so a viewer that stops reading shows in its backlog within seconds.
    static let viewerSendBuffer: Int32 = 256 << 10

    init(events: EventPoll) { self.events = events }

    subscript(token: UInt64) -> HTTPConnection? { connections[token] }

    var all: [HTTPConnection] { Array(connections.values) }

    /// Watches an accepted (or adopted) socket as a new connection; one it cannot serve is closed.
    func register(_ fd: Int32, now: Date) {
        let token = nextToken
        do throws(SystemCallError) {
            // The loop's sockets do not block, and no child process inherits one.
            let flags = try syscall(where: "fcntl") { fcntl(fd, F_GETFL) }
            try syscall(where: "fcntl") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
            try syscall(where: "fcntl") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // Both best effort: an adopted Unix socket has no Nagle to turn off, and with the
            // kernel's own buffer a viewer that stops reading only shows in its backlog later.
            try? HTTPListener.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            try? HTTPListener.setOption(fd, SOL_SOCKET, SO_SNDBUF, Self.viewerSendBuffer)
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

    /// Closes the oldest connection that is not a viewer; false when there is none.
    func dropOldestPending() -> Bool {
        while pendingHead < pendingOrder.count {
            let token = pendingOrder[pendingHead]
            pendingHead += 1
            if let c = connections[token], !c.isLongLived {
                close(c)
                return true
            }
        }
        return false
    }

    func close(_ c: HTTPConnection) {
        guard connections.removeValue(forKey: c.token) != nil else { return }
        if c.phase == .viewing {
            c.fanOut?.remove(c.token)
            viewerCount -= 1
        } else if c.phase == .subscribed {
            subscriberCount -= 1
        } else {
            pendingCount -= 1
        }
        try? closeDescriptor(c.fd)  // the connection is over whatever close says
    }

    /// A pending connection became a viewer.
    func becameViewer() {
        pendingCount -= 1
        viewerCount += 1
    }

    /// A pending connection became an event reader.
    func becameSubscriber() {
        pendingCount -= 1
        subscriberCount += 1
    }

    /// Forgets the viewers and closed connections at the front of the pending order.
    func compact() {
        while pendingHead < pendingOrder.count, connections[pendingOrder[pendingHead]]?.isLongLived ?? true {
            pendingHead += 1
        }
        if pendingHead > 1024 && pendingHead * 2 > pendingOrder.count {
            pendingOrder.removeFirst(pendingHead)
            pendingHead = 0
        }
    }
}
