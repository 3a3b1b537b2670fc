import FFmpeg

/// A file by name. A regular file buffers writes (a live file need not reach the disk per packet)
/// and applies the trailer's updates, so the finished file carries a true header; a pipe or FIFO
/// by name is fed by a streaming muxer (no updates) with no buffer, as stdout is.
public final class FileSink: ChunkSink, @unchecked Sendable {
    // Used by the mux thread only.
    public let name: String
    private let fd: FileDescriptor
    // `@exclusivity(unchecked)`: fields of the per-packet path, used by one thread (or under a
    // lock) with no overlapping access; see "Exclusivity" in docs/architecture.md.
    /// Media chunks waiting to be written, still in the muxer's buffers: one `writev` sends them
    /// without copying them (and only whole ASF packets and FLV tags reach the file, so a
    /// killed process leaves a readable one).
    @exclusivity(unchecked) private var pending: [MuxedBytes] = []
    @exclusivity(unchecked) private var pendingBytes = 0
    private let bufferLimit: Int
    @exclusivity(unchecked) private var closed = false

    /// - Parameter overwrite: false refuses a regular file that exists (a device is still written).
    /// Bytes gathered before a `writev`: few system calls, yet a killed process loses little.
    public static let defaultBufferLimit = 64 * 1024
    /// At most this many chunks per `writev` (IOV_MAX is 1024).
    static let chunksPerWrite = 256

    public init(path: String, overwrite: Bool = true, bufferLimit: Int = FileSink.defaultBufferLimit) throws {
        fd = try FileDescriptor.create(path, overwrite: overwrite)
        name = path
        self.bufferLimit = bufferLimit
    }

    // Not closed: its session failed to build or dropped it after a failed write, the error told.
    deinit { if !closed { try? fd.close() } }

    public func write(_ chunk: Chunk) throws {
        if let bytes = chunk.muxedBytes, chunk.updates.isEmpty {
            if bytes.count > 0 {
                pending.append(bytes)
                pendingBytes += bytes.count
            }
            if pendingBytes >= bufferLimit || pending.count >= Self.chunksPerWrite { try flush() }
            return
        }
        // The header goes out at once, so even a file killed early starts readable.
        try flush()
        try chunk.withUnsafeBytes { try fd.write($0) }
        for update in chunk.updates { try fd.write(update.bytes, at: update.offset) }
    }

    public func flush() throws {
        guard !pending.isEmpty else { return }
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingBytes = 0
        }
        try fd.write(pending.map { UnsafeRawBufferPointer(start: $0.baseAddress, count: $0.count) })
    }

    public func close() throws {
        guard !closed else { return }
        closed = true
        do {
            try flush()
        } catch {
            try? fd.close()  // the failed write is what to report
            throw error
        }
        try fd.close()
    }
}
