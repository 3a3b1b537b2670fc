import Foundation

/// One live stream served over HTTP (`/live.flv`): the sink its streaming muxer writes. It only
/// hands chunks over — `write` appends to a mailbox under a lock and wakes the server's event loop
/// — so the mux thread never waits on a viewer. The loop keeps the header, the GOP cache and the
/// viewers (`StreamFanOut`). Locking: `lock` guards every `var`.
final class StreamHub: ChunkSink, @unchecked Sendable {
    let name: String
    let contentType: String
    let queueLimit: Int
    let countDropped: @Sendable (Int) -> Void
    private let lock = NSLock()
    private var mailbox: [Chunk] = []
    private var closed = false
    private var wake: (@Sendable () -> Void)?
    private var codecs: [StreamCodec] = []
    /// Signalled by the loop once every viewer of a closed hub has been sent its end or cut off.
    private let drained = DispatchSemaphore(value: 0)
    /// How long `close` waits for viewers to receive the end of the stream before they are cut off.
    static let closeGraceSeconds = 2.0

    init(name: String, contentType: String, queueLimit: Int, countDropped: @escaping @Sendable (Int) -> Void) {
        self.name = name
        self.contentType = contentType
        self.queueLimit = queueLimit
        self.countDropped = countDropped
    }

    /// Called by the server that serves this hub: how to wake its loop while it runs (nil after).
    func attach(wake: (@Sendable () -> Void)?) {
        lock.lock()
        self.wake = wake
        lock.unlock()
    }

    /// The streams' codecs, for the server's index (known once the writers exist).
    var streamCodecs: [StreamCodec] {
        get { lock.lock(); defer { lock.unlock() }; return codecs }
        set { lock.lock(); codecs = newValue; lock.unlock() }
    }

    func write(_ chunk: Chunk) throws {
        lock.lock()
        // The loop takes the whole mailbox at once: only the first chunk after a take needs a wake.
        let first = mailbox.isEmpty
        mailbox.append(chunk)
        let wake = first ? self.wake : nil
        lock.unlock()
        wake?()
    }

    /// The loop's side: the chunks written since the last take, and whether the hub is closed.
    func take() -> (chunks: [Chunk], closed: Bool) {
        lock.lock()
        defer { lock.unlock() }
        let chunks = mailbox
        mailbox = []
        return (chunks, closed)
    }

    /// The loop's side: every viewer of the closed hub is gone.
    func viewersDrained() { drained.signal() }

    /// Ends the stream for its viewers: they receive what is queued and the end; the loop cuts off
    /// any still there after `closeGraceSeconds`. Waits for that (not at all without a running loop).
    func close() throws {
        lock.lock()
        let already = closed
        closed = true
        let wake = self.wake
        lock.unlock()
        guard !already, let wake else { return }
        wake()
        _ = drained.wait(timeout: .now() + Self.closeGraceSeconds + 1)
    }
}
