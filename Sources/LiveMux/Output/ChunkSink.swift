/// Where labelled chunks go. Sinks know nothing of containers; containers nothing of sinks.
public protocol ChunkSink: AnyObject, Sendable {
    /// A name for messages (a URL with its secrets masked).
    var name: String { get }
    /// Whether the sink can apply a trailer's updates to earlier bytes (a regular file).
    var isSeekable: Bool { get }
    func write(_ chunk: Chunk) throws
    /// Writes out anything buffered and releases the sink.
    func close() throws
}

/// A regular file. Buffers writes (a live file need not reach the disk per packet) and applies
/// the trailer's updates, so the finished file carries a true header.
public final class FileSink: ChunkSink, @unchecked Sendable {
    // Used by the mux thread only.
    public let name: String
    public var isSeekable: Bool { true }
    private let fd: FileDescriptor
    /// Whole chunks waiting to be written (so a killed process leaves whole ASF packets and FLV
    /// tags); raw memory, copied into with one memcpy per chunk.
    private let buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    private var closed = false

    public init(path: String, bufferLimit: Int = 64 * 1024) throws {
        fd = try FileDescriptor.create(path)
        name = path
        buffer = .allocate(byteCount: max(1, bufferLimit), alignment: 16)
    }

    deinit {
        if !closed { fd.close() }
        buffer.deallocate()
    }

    public func write(_ chunk: Chunk) throws {
        try chunk.withUnsafeBytes { bytes in
            if used + bytes.count > buffer.count { try flush() }
            if bytes.count >= buffer.count {
                try fd.write(bytes)
            } else if !bytes.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: buffer[used...]).copyMemory(from: bytes)
                used += bytes.count
            }
        }
        // The header goes out at once, so even a file killed early starts readable.
        if used == buffer.count || chunk.kind == .header || !chunk.updates.isEmpty {
            try flush()
        }
        for update in chunk.updates { try fd.write(update.bytes, at: update.offset) }
    }

    public func flush() throws {
        guard used > 0 else { return }
        defer { used = 0 }
        try fd.write(UnsafeRawBufferPointer(rebasing: buffer[..<used]))
    }

    public func close() throws {
        guard !closed else { return }
        closed = true
        defer { fd.close() }
        try flush()
    }
}

/// Standard output, as a pipe: every chunk goes out at once, updates are ignored.
public final class StandardOutputSink: ChunkSink, @unchecked Sendable {
    // Used by the mux thread only.
    public let name = "stdout"
    public var isSeekable: Bool { false }

    public init() {}

    public func write(_ chunk: Chunk) throws {
        guard !chunk.isEmpty else { return }
        try chunk.withUnsafeBytes { try FileDescriptor.standardOutput.write($0) }
    }

    public func close() throws {}
}
