import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM: the first asks for a graceful stop, a second exits at once with 130.
/// SIGUSR1 cuts the segments (`onCut`), as often as it comes. SIGPIPE is ignored, so a closed
/// stdout is an error we report, not a silent death.
///
/// The three signals are blocked in every thread (`blockStopSignals` runs before any thread starts,
/// and threads inherit the mask) and one thread takes them with `sigwait`: no handler runs in a
/// random thread, and it works the same under ThreadSanitizer, which defers handlers.
final class SignalHandling: @unchecked Sendable {
    /// Signals this soon after the first are the same stop: `timeout -s INT` and other supervisors
    /// signal the process and then its process group, so one stop arrives twice, microseconds apart.
    static let repeatWindowNanoseconds: UInt64 = 500_000_000

    // `lock` guards `onFirst`, which is nil once it ran or the job is over.
    private let lock = NSLock()
    private var onFirst: (@Sendable () -> Void)?
    private let onCut: @Sendable () -> Void

    static func ignoreBrokenPipe() {
        // SIG_ERR only for a signal number that is not one: SIGPIPE always is.
        _ = signal(SIGPIPE, SIG_IGN)
    }

    private static var stopSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGUSR1)
        return set
    }

    /// Blocks SIGINT, SIGTERM and SIGUSR1 in the calling thread and in every thread it starts later.
    static func blockStopSignals() {
        var set = stopSignals
        // It returns an error only for an invalid `how`; SIG_BLOCK is valid.
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    init(onFirst: @escaping @Sendable () -> Void, onCut: @escaping @Sendable () -> Void) {
        self.onFirst = onFirst
        self.onCut = onCut
        let thread = Thread { [self] in waitForSignals() }
        thread.name = "livemux-signals"
        thread.start()
    }

    /// Lets go of `onFirst` (and whatever job it holds) once the job is over: the signal thread
    /// lives until the process exits, and would keep the job's objects alive to the end.
    func finish() {
        lock.lock()
        onFirst = nil
        lock.unlock()
    }

    private func waitForSignals() {
        var set = Self.stopSignals
        var first: UInt64?
        while true {
            var sig: Int32 = 0
            guard sigwait(&set, &sig) == 0 else { continue }
            if sig == SIGUSR1 {
                onCut()
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard let firstAt = first else {
                first = now
                lock.lock()
                let stop = onFirst
                onFirst = nil
                lock.unlock()
                stop?()
                continue
            }
            if now - firstAt < Self.repeatWindowNanoseconds { continue }
            Terminal.error("interrupted again: exiting without finishing the outputs")
            // _exit: at once, without exit handlers (such as a sanitizer's leak check of the job
            // still running); outputs go out with write/writev, so nothing of ours waits in stdio.
            _exit(130)
        }
    }
}
