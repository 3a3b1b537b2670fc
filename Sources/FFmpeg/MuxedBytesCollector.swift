import Glibc

/// Where a muxer's output context writes: appends the bytes to a pooled buffer until `take`
/// hands them out as one `MuxedBytes`. Used by the mux thread only (through the AVIOContext's
/// write callback, which runs inside the muxer calls).
final class MuxedBytesCollector {
    private let pool = MuxBufferPool()
    // `@exclusivity(unchecked)`: fields of the per-packet path, used by one thread (or under a
    // lock) with no overlapping access; see "Exclusivity" in docs/architecture.md.
    @exclusivity(unchecked) private var base: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var capacity = 0
    @exclusivity(unchecked) private var count = 0
    /// Set when a buffer could not be had or grown; the write callback then reports ENOMEM.
    private(set) var outOfMemory = false  // read by OutputContainer: checked

    deinit { if let base { free(base) } }

    /// Appends bytes; false when no memory could be had for them.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count > 0 else { return true }
        if base == nil {
            guard let b = pool.take() else { outOfMemory = true; return false }
            (base, capacity) = (b.base, b.capacity)
        }
        if count + bytes.count > capacity {
            var grown = capacity
            while grown < count + bytes.count { grown *= 2 }
            guard let b = realloc(base, grown) else { outOfMemory = true; return false }
            (base, capacity) = (b, grown)
        }
        (base! + count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        count += bytes.count
        return true
    }

    /// What was appended since the last `take`, as one chunk of bytes.
    func take() -> MuxedBytes {
        guard let b = base, count > 0 else { return MuxedBytes.empty }
        defer { (base, capacity, count) = (nil, 0, 0) }
        return MuxedBytes(taking: b, capacity: capacity, count: count, pool: pool)
    }
}
