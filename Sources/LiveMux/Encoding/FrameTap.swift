import FFmpeg
import POSIX

/// Where the video encoder hands the dashboard's snapshot a frame, and only when one is asked
/// for: a reference to the frame it is about to encode (its buffers shared, not copied). When
/// nobody asks, a frame costs one uncontended lock round and nothing is kept.
final class FrameTap: Sendable {
    private struct State {
        var wanted = false
        var frame: Frame?
    }
    private let state = Locked(State())

    /// The video encoder's thread, for each frame it encodes.
    func offer(_ frame: Frame) {
        guard state.withLock({ $0.wanted }) else { return }
        let reference = try? frame.reference()  // out of memory: the asker times out
        state.withLock { s in
            s.frame = reference
            s.wanted = reference == nil
        }
        state.broadcast()
    }

    /// Asks for the next frame the encoder takes and waits for it until `deadline` (µs on the
    /// monotonic clock); nil when none came (the video ended, or a device is away).
    func nextFrame(deadline: Int64) -> Frame? {
        state.withLock { s in
            s.wanted = true
            s.frame = nil
        }
        return state.withLock(waitingUntil: { $0.frame != nil }, deadline: deadline) { s, _ in
            defer { (s.frame, s.wanted) = (nil, false) }
            return s.frame
        }
    }
}
