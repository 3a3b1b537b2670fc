import FFmpeg

/// Standard output, as a pipe: every chunk goes out at once, updates are ignored.
public final class StandardOutputSink: ChunkSink, @unchecked Sendable {
    // Used by the mux thread only.
    public let name = "stdout"

    public init() {}

    public func write(_ chunk: Chunk) throws {
        guard !chunk.isEmpty else { return }
        try chunk.withUnsafeBytes { try FileDescriptor.standardOutput.write($0) }
    }

    public func close() throws {}
}
