import FFmpeg
import POSIX

/// Runs an encoder on its own thread behind a short queue of frames, so that capturing the next
/// frame (decoding it, or drawing it for a test source) overlaps encoding this one. The frames are
/// references, not copies. The queue and its flags live in `state`; the encoder itself is touched
/// only by the thread.
final class EncoderThread: FrameConsumer, Sendable {
    private let encoder: FrameConsumer
    private struct State {
        var frames: [(Frame, Int64, Int64)] = []
        var closed = false
        var ending = false
        var failure: Error?
        var thread: WorkerThread?  // set by `start`, joined by `finish`
    }
    private let state = Locked(State())
    private let capacity: Int
    private let name: String

    init(_ encoder: FrameConsumer, name: String, capacity: Int = 1) {
        self.encoder = encoder
        self.capacity = capacity
        self.name = name
    }

    /// Starts the thread; before this, `consume` would wait for room forever.
    func start() {
        state.withLock { s in
            guard s.thread == nil else { return }
            s.thread = WorkerThread.spawn(name) { [self] in run() }
        }
    }

    var isDone: Bool { state.withLock { $0.closed } }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        let reference = try frame.reference()
        let hasRoom = { [capacity] (s: State) in s.frames.count < capacity || s.closed }
        let queued: Bool = try state.withLock(waitingUntil: hasRoom) { s, _ in
            if let failure = s.failure { throw failure }
            if s.closed { return false }
            s.frames.append((reference, time, wallTime))
            return true
        }
        guard queued else { return false }
        state.broadcast()
        // Return once there is room again: with one place (a source that can wait), once the
        // encoder has taken the frame, so capture makes the next frame while this one encodes and
        // never more than one frame waits (each is 1.4 MB at 720p).
        state.withLock(waitingUntil: hasRoom) { _, _ in }
        return true
    }

    /// Waits until the thread has encoded what is queued and flushed the encoder.
    func finish() throws {
        let thread = state.withLock { s in
            s.ending = true
            return s.thread
        }
        state.broadcast()
        thread?.join()
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    private func run() {
        while true {
            // nil: nothing is queued and the owner is ending.
            let next: (frame: (Frame, Int64, Int64), skip: Bool)? =
                state.withLock(waitingUntil: { !$0.frames.isEmpty || $0.ending }) { s, _ in
                    if s.frames.isEmpty { return nil }
                    return (s.frames.removeFirst(), s.closed)
                }
            guard let next else { break }
            state.broadcast()
            if next.skip { continue }
            let (frame, time, wallTime) = next.frame
            do {
                if try !encoder.consume(frame, at: time, capturedAt: wallTime) { close(nil) }
            } catch {
                close(error)
            }
        }
        do { try encoder.finish() } catch { close(error) }
    }

    private func close(_ error: Error?) {
        state.withLock { s in
            s.closed = true
            if s.failure == nil { s.failure = error }
        }
        state.broadcast()
    }
}
