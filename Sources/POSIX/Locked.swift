#if canImport(Glibc)
import Glibc
#endif

/// State that lives inside its lock: `withLock` is the only way to it, so what a lock guards is
/// what it holds. Threads that wait for the state to change use the waiting form, whose predicate
/// and body run only with the lock held, so no access to the state is open while a thread sleeps.
///
/// A pthread mutex and condition (on the monotonic clock), not Synchronization's `Mutex`: on
/// Linux that one takes a futex ThreadSanitizer cannot see, and it reported every access it
/// guards as a race.
public final class Locked<State>: @unchecked Sendable {
    // `mutex` guards `state`; both pthread objects stay at one address for the object's life.
    // `@usableFromInline` so that `withLock` is inlined and specialized in the modules that call
    // it: the muxer's per-packet path takes it.
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    @usableFromInline let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    @usableFromInline var state: State

    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    @inlinable
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Waits until `ready` holds or the monotonic clock reaches `deadline` (µs, as
    /// `clock_gettime(CLOCK_MONOTONIC)`), then runs `body` with the lock held; `body` learns
    /// whether `ready` held.
    public func withLock<R>(waitingUntil ready: (State) -> Bool, deadline: Int64? = nil,
                            _ body: (inout State, _ ready: Bool) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(state) {
            guard let deadline else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            var until = timespec(tv_sec: Int(deadline / 1_000_000), tv_nsec: Int(deadline % 1_000_000) * 1000)
            if pthread_cond_timedwait(condition, mutex, &until) == ETIMEDOUT { break }
        }
        return try body(&state, ready(state))
    }

    /// Wakes every waiter to look at the state again.
    public func broadcast() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
