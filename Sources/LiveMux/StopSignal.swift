import FFmpeg
import POSIX

/// A flag every thread checks, with a wait that the flag wakes: pacing sleeps on it, so a stop
/// never waits for a sleep to end.
final class StopSignal: Sendable {
    private let requested = Locked(false)

    var isRequested: Bool { requested.withLock { $0 } }

    func request() {
        requested.withLock { $0 = true }
        requested.broadcast()
    }

    /// Sleeps until the monotonic clock reaches `deadline` (µs) or a stop is requested; returns
    /// false when stopped.
    func sleep(untilMonotonic deadline: Int64) -> Bool {
        requested.withLock(waitingUntil: { $0 }, deadline: deadline) { stopped, _ in !stopped }
    }
}
