import Glibc

/// Bytes a muxer wrote, kept in the buffer they were written into (no copy) until the last
/// reference goes, which gives the buffer back to its pool. Immutable, so it may cross threads.
public final class MuxedBytes: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer?
    private let capacity: Int
    private let pool: MuxBufferPool?
    public let count: Int

    /// No bytes (an ASF packet still filling): one object for all, not one per packet.
    static let empty = MuxedBytes()

    private init() {
        base = nil
        capacity = 0
        pool = nil
        count = 0
    }

    /// Takes over a buffer of `pool`'s (nil: a malloc'd buffer of its own) holding `count` bytes.
    init(taking base: UnsafeMutableRawPointer, capacity: Int, count: Int, pool: MuxBufferPool?) {
        self.base = base
        self.capacity = capacity
        self.pool = pool
        self.count = count
    }

    /// A copy of bytes made elsewhere (LiveMux's own FLV tags).
    public convenience init(copying bytes: [UInt8]) throws {
        guard !bytes.isEmpty else {
            self.init()
            return
        }
        guard let base = malloc(bytes.count) else { throw outOfMemory("malloc") }
        bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        self.init(taking: base, capacity: bytes.count, count: bytes.count, pool: nil)
    }

    deinit {
        guard let base else { return }
        if let pool { pool.give(base, capacity: capacity) } else { free(base) }
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy as an array.
    public var array: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The first byte, valid as long as this object lives (for a vectored write of several).
    public var baseAddress: UnsafeRawPointer? { base.map { UnsafeRawPointer($0) } }
}
