import Foundation

/// State that threads wait on: a `Mutex`-style `withLock` over it, plus waits that hold no access
/// to the state while they sleep (the predicate and the body run only with the lock held).
/// For state nobody waits on, `Mutex` from Synchronization.
final class ConditionLock<State>: @unchecked Sendable {
    // `condition` guards `state`; every access goes through the methods below.
    private let condition = NSCondition()
    private var state: State

    init(_ state: State) { self.state = state }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Waits until `ready` holds (or `deadline` passes), then runs `body` with the lock still held;
    /// `body` learns whether `ready` held.
    func withLock<R>(waitingUntil ready: (State) -> Bool, deadline: Date? = nil,
                     _ body: (inout State, _ ready: Bool) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        while !ready(state) {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return try body(&state, ready(state))
    }

    /// Wakes every waiter, to look at the state again.
    func broadcast() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
