import Foundation
import FFmpeg

/// A flag every thread checks, with a wait that the flag wakes: pacing sleeps on it, so a stop
/// never waits for a sleep to end.
final class StopSignal: Sendable {
    private let requested = ConditionLock(false)

    var isRequested: Bool { requested.withLock { $0 } }

    func request() {
        requested.withLock { $0 = true }
        requested.broadcast()
    }

    /// Sleeps until the monotonic clock reaches `deadline` (µs) or a stop is requested; returns
    /// false when stopped.
    func sleep(untilMonotonic deadline: Int64) -> Bool {
        let remaining = Double(deadline - Timestamp.monotonicMicroseconds()) / 1e6
        return requested.withLock(waitingUntil: { $0 || Timestamp.monotonicMicroseconds() >= deadline },
                                  deadline: Date(timeIntervalSinceNow: remaining)) { stopped, _ in !stopped }
    }
}
