import CEventPoll
#if canImport(Glibc)
import Glibc
#endif

/// An epoll instance and an eventfd that wakes it from other threads: what the HTTP server's one
/// event-loop thread waits on. Descriptors are registered with a token (the loop's connection
/// number) that comes back with their events.
final class EventPoll: @unchecked Sendable {
    struct Event {
        let token: UInt64
        let readable: Bool
        let writable: Bool
        /// The peer hung up or the socket failed.
        let failed: Bool
    }

    /// The token the wake eventfd reports with.
    static let wakeToken = UInt64.max
    private let epoll: Int32
    private let wakeFD: Int32
    private var events: [epoll_event]

    init(capacity: Int = 512) throws {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        events = [epoll_event](repeating: epoll_event(), count: capacity)
        guard epoll >= 0, wakeFD >= 0 else {
            let message = String(cString: strerror(errno))
            if epoll >= 0 { Glibc.close(epoll) }
            if wakeFD >= 0 { Glibc.close(wakeFD) }
            throw LiveMuxError.output("cannot create the HTTP server's event loop: \(message)")
        }
        _ = add(wakeFD, token: Self.wakeToken, edgeTriggered: false, writable: false)
    }

    deinit {
        Glibc.close(epoll)
        Glibc.close(wakeFD)
    }

    /// Watches `fd`: edge-triggered connections are told when they become readable or writable;
    /// level-triggered ones (the listener) while they are readable.
    @discardableResult
    func add(_ fd: Int32, token: UInt64, edgeTriggered: Bool, writable: Bool = true) -> Bool {
        var flags = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        if writable { flags |= EPOLLOUT.rawValue }
        if edgeTriggered { flags |= EPOLLET.rawValue }
        var event = epoll_event()
        event.events = flags
        event.data.u64 = token
        return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0
    }

    /// Wakes `wait` from any thread (an eventfd counter, so wakes coalesce).
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Waits up to `timeoutMs` for events; a wake comes back as `wakeToken` and is consumed.
    func wait(timeoutMs: Int32) -> [Event] {
        let n = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), timeoutMs) }
        guard n > 0 else { return [] }
        var ready: [Event] = []
        ready.reserveCapacity(Int(n))
        for e in events[..<Int(n)] {
            let token = e.data.u64
            if token == Self.wakeToken {
                var count: UInt64 = 0
                _ = Glibc.read(wakeFD, &count, MemoryLayout<UInt64>.size)
            }
            let flags = e.events
            ready.append(Event(token: token, readable: flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0,
                               writable: flags & EPOLLOUT.rawValue != 0,
                               failed: flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0))
        }
        return ready
    }
}
