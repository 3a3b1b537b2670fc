import CLinux
import Foundation

/// The TCP socket under a libavformat connection (rtmp://, tcp://…), found from outside:
/// libavformat keeps its `URLContext` private (url.h is not installed, `ffurl_get_file_handle` is
/// not exported), so the socket is the one in /proc/self/fd that appeared during the connect and
/// whose peer is the URL's port. Kernel interfaces only, so it works for every TCP-based protocol.
///
/// It holds the descriptor number, not a duplicate (a duplicate would keep the connection open
/// after libavformat closed it), and checks the socket's inode before each use, so a number that
/// was closed and reused is never read. Any thread may read it.
public struct TCPSocket: Sendable {
    public let descriptor: Int32
    private let inode: UInt64

    /// What the kernel holds for this connection.
    public struct SendQueue: Sendable, Equatable {
        /// Bytes written but not yet acknowledged by the peer (SIOCOUTQ).
        public var unacknowledged: Int64
        /// Bytes the peer acknowledged since the connection began (TCP_INFO `tcpi_bytes_acked`).
        public var acknowledged: Int64

        public init(unacknowledged: Int64, acknowledged: Int64) {
            self.unacknowledged = unacknowledged
            self.acknowledged = acknowledged
        }
    }

    /// The inodes of the sockets open in this process now, to compare with after a connect.
    public static func openSockets() -> [Int32: UInt64] {
        var sockets: [Int32: UInt64] = [:]
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return sockets }
        for name in names {
            guard let fd = Int32(name), let inode = socketInode(fd) else { continue }
            sockets[fd] = inode
        }
        return sockets
    }

    /// The one connected TCP socket to `peerPort` that is open now and was not in `before`; nil
    /// when there is none, or more than one (two outputs connecting to one server at once).
    public static func connected(since before: [Int32: UInt64], peerPort: Int) -> TCPSocket? {
        let found = openSockets().filter { fd, inode in before[fd] != inode && Int(lm_tcp_peer_port(fd)) == peerPort }
        guard found.count == 1, let (fd, inode) = found.first else { return nil }
        return TCPSocket(descriptor: fd, inode: inode)
    }

    private static func socketInode(_ fd: Int32) -> UInt64? {
        var st = stat()
        // A descriptor that is no longer open is no socket of ours: nothing more to say.
        guard (try? syscall(where: "fstat") { fstat(fd, &st) }) != nil, (st.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return UInt64(st.st_ino)
    }

    /// Still the socket that was found (not closed, its number not reused).
    private var isSame: Bool { Self.socketInode(descriptor) == inode }

    /// What the kernel holds; nil once the socket is gone.
    public func sendQueue() -> SendQueue? {
        var unacked: Int64 = 0
        var acked: UInt64 = 0
        guard isSame, lm_tcp_send_queue(descriptor, &unacked, &acked) == 0 else { return nil }
        return SendQueue(unacknowledged: unacked, acknowledged: Int64(acked))
    }

    /// Bounds the kernel's send buffer to about `bytes`; the size the kernel took, or nil.
    @discardableResult
    public func boundSendBuffer(_ bytes: Int) -> Int? {
        guard isSame else { return nil }
        let taken = lm_set_send_buffer(descriptor, Int32(clamping: bytes))
        return taken >= 0 ? Int(taken) : nil
    }
}
