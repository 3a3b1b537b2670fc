import FFmpeg
import POSIX

/// One live stream served over HTTP (`/live.flv`): the sink its streaming muxer writes. It only
/// hands chunks over — `write` appends to a mailbox under a lock and wakes the server's event loop
/// — so the mux thread never waits on a viewer. The loop keeps the header, the GOP cache and the
/// viewers (`StreamFanOut`). The mailbox and the rest that changes live in `state`.
final class StreamHub: ChunkSink, Sendable {
    let name: String
    let queueLimit: Int
    let countDropped: @Sendable (Int) -> Void
    private struct State {
        var mailbox: [Chunk] = []
        var closed = false
        var wake: (@Sendable () -> Void)?
        var codecs: [StreamCodec] = []
        var contentType: String
        /// Set by the loop once every viewer of a closed hub has been sent its end or cut off.
        var drained = false
    }
    private let state: Locked<State>
    /// How long `close` waits for viewers to receive the end of the stream before they are cut off.
    static let closeGraceSeconds = 2.0

    init(name: String, contentType: String, queueLimit: Int, countDropped: @escaping @Sendable (Int) -> Void) {
        self.name = name
        state = Locked(State(contentType: contentType))
        self.queueLimit = queueLimit
        self.countDropped = countDropped
    }

    /// Called by the server that serves this hub: how to wake its loop while it runs (nil after).
    func attach(wake: (@Sendable () -> Void)?) {
        state.withLock { $0.wake = wake }
    }

    /// The streams' codecs, for the server's index (known once the writers exist).
    var streamCodecs: [StreamCodec] {
        get { state.withLock { $0.codecs } }
        set { state.withLock { $0.codecs = newValue } }
    }

    /// The stream's Content-Type: the browsers' MP4 names its codecs once the writers exist.
    var contentType: String {
        get { state.withLock { $0.contentType } }
        set { state.withLock { $0.contentType = newValue } }
    }

    func write(_ chunk: Chunk) throws {
        let wake = state.withLock { s in
            // The loop takes the whole mailbox at once: only the first chunk after a take needs a wake.
            let first = s.mailbox.isEmpty
            s.mailbox.append(chunk)
            return first ? s.wake : nil
        }
        wake?()
    }

    /// The loop's side: the chunks written since the last take, and whether the hub is closed.
    func take() -> (chunks: [Chunk], closed: Bool) {
        state.withLock { s in
            defer { s.mailbox = [] }
            return (s.mailbox, s.closed)
        }
    }

    /// The loop's side: every viewer of the closed hub is gone.
    func viewersDrained() {
        state.withLock { $0.drained = true }
        state.broadcast()
    }

    /// Whether `close` was called: the stream has ended, or never began (a codec it cannot carry).
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Ends the stream for its viewers: they receive what is queued and the end; the loop cuts off
    /// any still there after `closeGraceSeconds`. Waits for that (not at all without a running loop).
    func close() throws {
        let (already, wake) = state.withLock { s in
            defer { s.closed = true }
            return (s.closed, s.wake)
        }
        guard !already, let wake else { return }
        wake()
        let deadline = Timestamp.monotonicMicroseconds() + Int64((Self.closeGraceSeconds + 1) * 1_000_000)
        state.withLock(waitingUntil: { $0.drained }, deadline: deadline) { _, _ in }
    }
}
