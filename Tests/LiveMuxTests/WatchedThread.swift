import Foundation
import XCTest
import POSIX

/// A closure run on a thread of its own, so a test can see it block and wait for it with a
/// deadline: a wait that never ends fails the test instead of hanging the suite.
final class WatchedThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// The thread's /proc/PID/task/TID, and whether its closure returned.
    private let state = Locked((taskPath: "", finished: false))

    /// Starts `body` and returns once its thread runs.
    init(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let running = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            // /proc/thread-self is this thread's /proc/PID/task/TID.
            let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
            state.withLock { $0.taskPath = "/proc/" + path }
            running.signal()
            body()
            state.withLock { $0.finished = true }
            done.signal()
        }
        thread.name = name
        thread.start()
        running.wait()
    }

    var hasFinished: Bool { state.withLock { $0.finished } }

    /// Waits up to `seconds` for the closure to return; whether it did.
    func finishes(within seconds: Double) -> Bool {
        guard done.wait(timeout: .now() + seconds) == .success else { return false }
        done.signal()  // so that a later call sees it too
        return true
    }

    /// Waits up to `seconds` until the thread sleeps in the kernel (state S: a lock or condition
    /// wait, the only sleeps of the closures tested) without having returned; whether it did.
    /// Seen twice in a row, so a thread merely descheduled on its way is not taken for blocked.
    func blocks(within seconds: Double = 10) -> Bool {
        let stat = state.withLock { $0.taskPath } + "/stat"
        var sleeping = 0, finished = false
        let blocked = waitUntil(deadline: seconds, every: 0.005) {
            if hasFinished { finished = true; return true }
            // "TID (name) S …": the state follows the name's closing parenthesis.
            let text = (try? String(contentsOfFile: stat, encoding: .utf8)) ?? ""
            let state = text.range(of: ") ", options: .backwards).map { text[$0.upperBound...].first } ?? nil
            sleeping = state == "S" ? sleeping + 1 : 0
            return sleeping >= 2
        }
        return blocked && !finished
    }
}
