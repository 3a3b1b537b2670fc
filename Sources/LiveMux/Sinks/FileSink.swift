import FFmpeg

/// A file by name. A regular file buffers writes (a live file need not reach the disk per packet)
/// and applies the trailer's updates, so the finished file carries a true header; a pipe, FIFO or
/// device by name is fed by a streaming muxer (no updates) and gets each batch the mux thread
/// wrote at its end (`bufferLimit` 0): at once when live, and one `writev` for many packets when
/// a remux runs at full speed (one `write` per FLV tag cost a third of `mux -o /dev/null`'s CPU).
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
    /// A regular file, so a write that fails for lack of space is undone (see `write`).
    private let undoesFailedWrites: Bool
    /// Bytes written in order (the updates only rewrite some of them): where an undone write began.
    @exclusivity(unchecked) private var length: Int64 = 0

    /// - Parameter overwrite: false refuses a regular file that exists (a device is still written).
    /// Bytes gathered before a `writev`: few system calls, yet a killed process loses little.
    public static let defaultBufferLimit = 64 * 1024
    /// At most this many chunks per `writev` (IOV_MAX is 1024).
    static let chunksPerWrite = 256

    public convenience init(path: String, overwrite: Bool = true, bufferLimit: Int = FileSink.defaultBufferLimit) throws {
        try self.init(FileDescriptor.create(path, overwrite: overwrite), bufferLimit: bufferLimit)
    }

    /// Writes to a file already open (`FileDescriptor.create` or `createNew`).
    init(_ fd: FileDescriptor, bufferLimit: Int = FileSink.defaultBufferLimit) throws {
        self.fd = fd
        name = fd.name
        self.bufferLimit = bufferLimit
        do {
            undoesFailedWrites = try fd.isRegularFile()
        } catch {
            try? fd.close()  // the failed fstat is what to report
            throw error
        }
    }

    // Not closed: its session failed to build or dropped it after a failed write, the error told.
    deinit { if !closed { try? fd.close() } }

    /// A write to a regular file that fails for lack of space (`SinkError.isOutOfSpace`) is
    /// undone: the file is cut back to where it ended before (whole packets, no partial one) and
    /// the chunk is not taken, so the same write can be made again once there is room.
    public func write(_ chunk: Chunk) throws {
        if let bytes = chunk.muxedBytes, chunk.updates.isEmpty {
            guard bytes.count > 0 else { return }
            pending.append(bytes)
            pendingBytes += bytes.count
            guard pendingBytes >= max(bufferLimit, Self.defaultBufferLimit) || pending.count >= Self.chunksPerWrite else { return }
            do {
                try flush()
            } catch {
                pending.removeLast()
                pendingBytes -= bytes.count
                throw error
            }
            return
        }
        // The header goes out at once, so even a file killed early starts readable.
        try flush()
        do {
            try chunk.withUnsafeBytes { try fd.write($0) }
            for update in chunk.updates { try fd.write(update.bytes, at: update.offset) }
        } catch {
            try undo(error, back: length)
        }
        length += Int64(chunk.count)
    }

    public func endOfBatch() throws {
        if bufferLimit == 0 { try flush() }
    }

    func flush() throws {
        guard !pending.isEmpty else { return }
        do {
            try fd.write(pending.map { UnsafeRawBufferPointer(start: $0.baseAddress, count: $0.count) })
        } catch {
            try undo(error, back: length)
        }
        length += Int64(pendingBytes)
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
    }

    /// Cuts the file back to `start` after a write that failed for lack of space, then throws the
    /// failure; a failure to cut it back is thrown instead (the write cannot be made again).
    private func undo(_ error: Error, back start: Int64) throws -> Never {
        if undoesFailedWrites, let failure = error as? SinkError, failure.isOutOfSpace { try fd.truncate(to: start) }
        throw error
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
