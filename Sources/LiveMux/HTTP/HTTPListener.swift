import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP server's listening socket (non-blocking, IPv4 or IPv6) and a spare descriptor, which
/// at the descriptor limit is freed to refuse one connection with 503 instead of leaving it in
/// the backlog. Used by the server's loop thread; `close` once, when the loop has stopped.
final class HTTPListener {
    let fd: Int32
    /// The address bound: port 0 became the port the kernel chose.
    let address: ListenAddress
    /// Kept open so that at the descriptor limit one can be freed to refuse a connection politely.
    private var reserveFD: Int32

    static let listenBacklog: Int32 = 4096

    /// Binds and listens, so a busy port fails before anything is recorded. `option` is the one
    /// that gave the address (`--listen`, `--http`): the hint of a failure names it.
    init(address: ListenAddress, option: String) throws {
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
            throw LiveMuxError.output("cannot listen on \(address.description): \(error.message) (\(Self.listenHint(error.errno, address, option: option)))")
        }
        let port = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        self.address = ListenAddress(host: address.host, port: port)
        self.fd = fd
        reserveFD = -1
    }

    /// Takes the spare descriptor; after `init`, once the socket is watched by the loop.
    func reserve() { reserveFD = Self.openReserve() }

    /// What to do about a failed bind or listen: the port for a busy one, the address for one
    /// this machine does not have (EADDRNOTAVAIL).
    private static func listenHint(_ code: Int32, _ address: ListenAddress, option: String) -> String {
        switch code {
        case EADDRINUSE: return "choose another \(option) port"
        case EADDRNOTAVAIL: return "no interface of this machine has the address \(address.host): listen on one of its own addresses, 127.0.0.1, or 0.0.0.0 for all"
        case EACCES where address.port < 1024: return "ports below 1024 need privileges: choose a port from 1024 on"
        default: return "check the \(option) address and port"
        }
    }

    /// The next waiting connection.
    func accept() -> NonBlockingResult<Int32> {
        nonBlockingSyscall(where: "accept", { Glibc.accept(fd, nil, nil) })
    }

    /// Out of descriptors: frees the spare one to accept a connection and answer it 503, then
    /// takes it again. False when there is no spare (connections then wait in the backlog).
    func refuseOne() -> Bool {
        guard reserveFD >= 0 else { return false }
        try? closeDescriptor(reserveFD)  // freed to make room: nothing else to do with it
        if case .done(let refused) = accept() {
            let busy = HTTPResponse.text("503 Service Unavailable", body: "too many connections\n")
            // Best effort: a client that cannot take these few bytes at once just sees the close.
            _ = busy.withUnsafeBytes { b in
                nonBlockingSyscall(where: "send") { send(refused, b.baseAddress, b.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            try? closeDescriptor(refused)  // the 503 was all it gets either way
        }
        reserveFD = Self.openReserve()
        return true
    }

    /// Closes the socket and the spare descriptor.
    func close() {
        // Closed once, at the end: a failure would leave nothing to undo.
        try? closeDescriptor(fd)
        if reserveFD >= 0 { try? closeDescriptor(reserveFD) }
    }

    /// A descriptor to free at the limit; -1 when there is none to spare (connections past the
    /// limit then wait in the backlog instead of getting 503).
    private static func openReserve() -> Int32 {
        (try? syscall(where: "open") { open("/dev/null", O_RDONLY | O_CLOEXEC) }) ?? -1
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SystemCallError) {
        var v = value
        try syscall(where: "setsockopt") { setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) }
    }
}
