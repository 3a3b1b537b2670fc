import Foundation
import FFmpeg

/// Runs an encoder on its own thread behind a short queue of frames, so that capturing the next
/// frame (decoding it, or drawing it for a test source) overlaps encoding this one. The frames are
/// references, not copies.
///
/// Locking: `condition` guards `frames`, `closed`, `ending` and `failure`. The encoder itself is
/// touched only by the thread.
final class EncoderThread: FrameConsumer, @unchecked Sendable {
    private let encoder: FrameConsumer
    private let condition = NSCondition()
    private var frames: [(Frame, Int64, Int64)] = []
    private var closed = false
    private var ending = false
    private var failure: Error?
    private let capacity: Int
    private var thread: WorkerThread?  // the owner's: set by `start`, joined by `finish`
    private let name: String

    init(_ encoder: FrameConsumer, name: String, capacity: Int = 1) {
        self.encoder = encoder
        self.capacity = capacity
        self.name = name
    }

    /// Starts the thread; before this, `consume` would wait for room forever.
    func start() {
        guard thread == nil else { return }
        thread = WorkerThread.spawn(name) { [self] in run() }
    }

    var isDone: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        let reference = try frame.reference()
        condition.lock()
        defer { condition.unlock() }
        while frames.count >= capacity && !closed { condition.wait() }
        if let failure { throw failure }
        if closed { return false }
        frames.append((reference, time, wallTime))
        condition.broadcast()
        // Return once there is room again: with one place (a source that can wait), once the
        // encoder has taken the frame, so capture makes the next frame while this one encodes and
        // never more than one frame waits (each is 1.4 MB at 720p).
        while frames.count >= capacity && !closed { condition.wait() }
        return true
    }

    /// Waits until the thread has encoded what is queued and flushed the encoder.
    func finish() throws {
        condition.lock()
        ending = true
        condition.broadcast()
        condition.unlock()
        thread?.join()
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
    }

    private func run() {
        while true {
            condition.lock()
            while frames.isEmpty && !ending { condition.wait() }
            if frames.isEmpty {
                condition.unlock()
                break
            }
            let (frame, time, wallTime) = frames.removeFirst()
            let skip = closed
            condition.broadcast()
            condition.unlock()
            if skip { continue }
            do {
                if try !encoder.consume(frame, at: time, capturedAt: wallTime) { close(nil) }
            } catch {
                close(error)
            }
        }
        do { try encoder.finish() } catch { close(error) }
    }

    private func close(_ error: Error?) {
        condition.lock()
        closed = true
        if failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }
}
