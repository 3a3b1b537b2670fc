import Foundation
import FFmpeg

/// A flag every thread checks, with a wait that the flag wakes: pacing sleeps on it, so a stop
/// never waits for a sleep to end. Locking: `condition` guards `requested`.
final class StopSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var requested = false

    var isRequested: Bool {
        condition.lock()
        defer { condition.unlock() }
        return requested
    }

    func request() {
        condition.lock()
        requested = true
        condition.broadcast()
        condition.unlock()
    }

    /// Sleeps until the monotonic clock reaches `deadline` (µs) or a stop is requested; returns
    /// false when stopped.
    func sleep(untilMonotonic deadline: Int64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !requested {
            let remaining = deadline - Timestamp.monotonicMicroseconds()
            if remaining <= 0 { return true }
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(remaining) / 1e6))
        }
        return false
    }
}
