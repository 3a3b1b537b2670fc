import Foundation
import FFmpeg

/// Hands chunks to the muxer's `onChunk` and, once requested, to its `AsyncStream`; never fails,
/// so the mux thread never drops it. Locking: `lock` guards `requested`.
final class CallbackSink: ChunkSink, @unchecked Sendable {
    let name = "callback"
    private let body: (@Sendable (Chunk) -> Void)?
    private let lock = NSLock()
    private var requested = false
    private let stream: AsyncStream<Chunk>
    private let continuation: AsyncStream<Chunk>.Continuation

    init(_ body: (@Sendable (Chunk) -> Void)?) {
        self.body = body
        (stream, continuation) = AsyncStream.makeStream(of: Chunk.self, bufferingPolicy: .unbounded)
    }

    func requestStream() -> AsyncStream<Chunk> {
        lock.lock()
        requested = true
        lock.unlock()
        return stream
    }

    func finishStream() { continuation.finish() }

    func write(_ chunk: Chunk) throws {
        body?(chunk)
        lock.lock()
        let yield = requested
        lock.unlock()
        if yield { continuation.yield(chunk) }
    }

    func close() throws {}
}
