import Glibc
import POSIX

/// Buffers that muxed bytes are written into, reused instead of allocated for every packet: a
/// dynamic buffer per packet (`avio_open_dyn_buf`, its context and its growing buffer) cost about
/// 1.8 µs, as much as muxing the packet. Buffers come back when the last sink lets go of their
/// chunk, from any thread. Only small ones are kept, and not too many, so a keyframe's large
/// buffer or a burst held by a slow sink does not stay as memory.
///
/// Locking: the spare buffers live in their `Locked`.
final class MuxBufferPool: Sendable {
    /// What a new buffer holds before it grows: a small packet's bytes.
    static let initialCapacity = 4096
    /// Larger buffers are freed when they come back.
    static let largestKept = 16 * 1024
    /// At most this many spare buffers (a file sink holds up to 64 KiB of chunks at once).
    static let mostKept = 256

    private struct Spare: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let capacity: Int
    }
    private let spare = Locked<[Spare]>([])

    deinit { spare.withLock { list in list.forEach { free($0.base) } } }

    /// A buffer to write into, with its capacity.
    func take() -> (base: UnsafeMutableRawPointer, capacity: Int)? {
        if let s = spare.withLock({ $0.popLast() }) { return (s.base, s.capacity) }
        guard let base = malloc(Self.initialCapacity) else { return nil }
        return (base, Self.initialCapacity)
    }

    func give(_ base: UnsafeMutableRawPointer, capacity: Int) {
        let kept = capacity <= Self.largestKept && spare.withLock { list -> Bool in
            guard list.count < Self.mostKept else { return false }
            list.append(Spare(base: base, capacity: capacity))
            return true
        }
        if !kept { free(base) }
    }
}
