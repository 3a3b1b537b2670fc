import FFmpeg

/// Where labelled chunks go. Sinks know nothing of containers; containers nothing of sinks.
public protocol ChunkSink: AnyObject, Sendable {
    /// A name for messages (a URL with its secrets masked).
    var name: String { get }
    func write(_ chunk: Chunk) throws
    /// The mux thread wrote a batch of packets: a sink that gathers a batch's chunks (a stream,
    /// which must not wait for more) writes them out now.
    func endOfBatch() throws
    /// Writes out anything buffered and releases the sink.
    func close() throws
}

extension ChunkSink {
    public func endOfBatch() throws {}
}
