import FFmpeg
import POSIX

/// Packets the mux thread has written, handed back to the thread that reads the next ones.
///
/// glibc's malloc serializes threads that free each other's memory: with a reader allocating
/// every packet and the mux thread freeing it, both threads spent a third of their time on one
/// arena's lock (and a futex wake per packet). A recycled packet's payload is released by the
/// reader's next `read(into:)`, on the thread that allocated it, and the packet itself is reused.
///
/// Both sides move whole batches, so the lock is taken once per batch, not per packet.
final class PacketPool: Sendable {
    private let spare = Locked<[Packet]>([])
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Hands written packets back (from the mux thread), leaving `packets` empty; past the limit
    /// they are simply freed.
    func give(_ packets: inout [EncodedPacket]) {
        spare.withLock { spare in
            while spare.count < limit, let p = packets.popLast() { spare.append(p.packet) }
        }
        packets.removeAll(keepingCapacity: true)
    }

    /// Moves every spare packet into `packets` (on the reading thread).
    func takeAll(into packets: inout [Packet]) {
        spare.withLock { spare in
            packets.append(contentsOf: spare)
            spare.removeAll(keepingCapacity: true)
        }
    }
}
