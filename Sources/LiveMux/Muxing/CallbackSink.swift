import FFmpeg
import Synchronization

/// Hands chunks to the muxer's `onChunk` and, once requested, to its `AsyncStream`; never fails,
/// so the mux thread never drops it.
final class CallbackSink: ChunkSink, Sendable {
    let name = "callback"
    private let body: (@Sendable (Chunk) -> Void)?
    /// The stream was asked for: only then are chunks buffered for it.
    private let requested = Atomic(false)
    private let stream: AsyncStream<Chunk>
    private let continuation: AsyncStream<Chunk>.Continuation

    init(_ body: (@Sendable (Chunk) -> Void)?) {
        self.body = body
        (stream, continuation) = AsyncStream.makeStream(of: Chunk.self, bufferingPolicy: .unbounded)
    }

    func requestStream() -> AsyncStream<Chunk> {
        requested.store(true, ordering: .releasing)
        return stream
    }

    func finishStream() { continuation.finish() }

    func write(_ chunk: Chunk) throws {
        body?(chunk)
        if requested.load(ordering: .acquiring) { continuation.yield(chunk) }
    }

    func close() throws {}
}
