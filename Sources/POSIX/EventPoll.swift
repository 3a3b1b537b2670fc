import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// An epoll instance and an eventfd that wakes it from other threads: what the HTTP server's one
/// event-loop thread waits on. Descriptors are registered with a token (the loop's connection
/// number) that comes back with their events. `wake` may be called from any thread; the rest
/// belongs to the loop's thread.
public final class EventPoll: @unchecked Sendable {
    public struct Event {
        public let token: UInt64
        public let readable: Bool
        public let writable: Bool
        /// The peer hung up or the socket failed.
        public let failed: Bool
    }

    /// The token the wake eventfd reports with.
    public static let wakeToken = UInt64.max
    private let epoll: Int32
    private let wakeFD: Int32
    private var events: [epoll_event]

    public init(capacity: Int = 512) throws(SystemCallError) {
        epoll = try syscall(where: "epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            wakeFD = try syscall(where: "eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
        } catch {
            try? closeDescriptor(epoll)  // never used: its own failure would say nothing more
            throw error
        }
        events = [epoll_event](repeating: epoll_event(), count: capacity)
        // Every property is set: a failure here runs `deinit`, which closes both.
        try add(wakeFD, token: Self.wakeToken, edgeTriggered: false, writable: false)
    }

    deinit {
        // Our own descriptors, closed once at the end: a failure would leave nothing to undo.
        try? closeDescriptor(epoll)
        try? closeDescriptor(wakeFD)
    }

    /// Watches `fd`: edge-triggered connections are told when they become readable or writable;
    /// level-triggered ones (the listener) while they are readable.
    public func add(_ fd: Int32, token: UInt64, edgeTriggered: Bool, writable: Bool = true) throws(SystemCallError) {
        var flags = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        if writable { flags |= EPOLLOUT.rawValue }
        if edgeTriggered { flags |= EPOLLET.rawValue }
        var event = epoll_event()
        event.events = flags
        event.data.u64 = token
        try syscall(where: "epoll_ctl") { epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) }
    }

    /// Wakes `wait` from any thread (an eventfd counter, so wakes coalesce).
    public func wake() {
        var one: UInt64 = 1
        // Only a full counter (EAGAIN) can refuse it, and a full counter wakes `wait` already.
        _ = nonBlockingSyscall(where: "write") { write(wakeFD, &one, MemoryLayout<UInt64>.size) }
    }

    /// Waits up to `timeoutMs` for events; a wake comes back as `wakeToken` and is consumed.
    public func wait(timeoutMs: Int32) -> [Event] {
        let n: Int32
        do {
            n = try events.withUnsafeMutableBufferPointer { buffer in
                try syscall(where: "epoll_wait") { epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), timeoutMs) }
            }
        } catch {
            // Only EBADF, EFAULT or EINVAL are left, each a bug here; the loop would spin on it.
            preconditionFailure("\(error)")
        }
        guard n > 0 else { return [] }
        var ready: [Event] = []
        ready.reserveCapacity(Int(n))
        for e in events[..<Int(n)] {
            let token = e.data.u64
            if token == Self.wakeToken {
                var count: UInt64 = 0
                // EAGAIN: nothing counted since the last read; either way the wake has done its work.
                _ = nonBlockingSyscall(where: "read") { read(wakeFD, &count, MemoryLayout<UInt64>.size) }
            }
            let flags = e.events
            ready.append(Event(token: token, readable: flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0,
                               writable: flags & EPOLLOUT.rawValue != 0,
                               failed: flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0))
        }
        return ready
    }
}
