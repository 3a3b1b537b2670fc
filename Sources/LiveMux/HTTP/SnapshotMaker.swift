import FFmpeg
import POSIX

/// Makes the dashboard's `/snapshot.jpg` on a thread of its own, so a JPEG encode (milliseconds
/// at 1080p) never holds up the HTTP server's event loop: the loop asks for widths, this thread
/// takes the video encoder's next frame from the `FrameTap`, encodes one JPEG per width asked
/// and wakes the loop to collect them. The thread starts at the first request, so a recording
/// nobody looks at has none.
final class SnapshotMaker: Sendable {
    enum Result {
        case jpeg([UInt8])
        case failed(String)
    }

    private struct State {
        /// Widths asked for and not yet made (0: the stream's own size).
        var requested: Set<Int> = []
        var finished: [Int: Result] = [:]
        var stopping = false
        var thread: WorkerThread?
    }
    private let state = Locked(State())
    private let tap: FrameTap
    private let wake: @Sendable () -> Void

    /// How long a request waits for the encoder's next frame (a camera that is away gives none).
    static let frameWaitSeconds = 1.0

    init(tap: FrameTap, wake: @escaping @Sendable () -> Void) {
        self.tap = tap
        self.wake = wake
    }

    /// Asks for a picture `width` wide (0: the stream's size); the loop collects it with `takeFinished`.
    func request(width: Int) {
        state.withLock { s in
            guard !s.stopping else { return }
            s.requested.insert(width)
            if s.thread == nil { s.thread = WorkerThread.spawn("livemux-snapshot") { [self] in run() } }
        }
        state.broadcast()
    }

    /// The pictures made since the last call, by width.
    func takeFinished() -> [Int: Result] {
        state.withLock { s in
            defer { s.finished = [:] }
            return s.finished
        }
    }

    /// Ends the thread, if it ever started.
    func stop() {
        let thread = state.withLock { s in
            s.stopping = true
            return s.thread
        }
        state.broadcast()
        thread?.join()
    }

    private func run() {
        while true {
            let widths = state.withLock(waitingUntil: { !$0.requested.isEmpty || $0.stopping }) { s, _ in
                s.stopping ? nil : s.requested
            }
            guard let widths else { return }
            let deadline = Timestamp.monotonicMicroseconds() + Int64(Self.frameWaitSeconds * 1_000_000)
            let frame = tap.nextFrame(deadline: deadline)
            var made: [Int: Result] = [:]
            for width in widths {
                guard let frame else {
                    made[width] = .failed("no video frame within \(Self.frameWaitSeconds) s")
                    continue
                }
                do {
                    made[width] = .jpeg(try JPEGEncoder.encode(frame, width: width == 0 ? nil : width))
                } catch {
                    made[width] = .failed("cannot encode the snapshot: \(error)")
                }
            }
            state.withLock { s in
                s.requested.subtract(widths)
                s.finished.merge(made) { _, new in new }
            }
            wake()
        }
    }
}
