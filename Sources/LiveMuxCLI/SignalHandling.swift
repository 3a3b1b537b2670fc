import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM while a job runs: the first asks for a graceful stop, a second exits at
/// once with 130. SIGUSR1 cuts the segments (`onCut`), as often as it comes. SIGPIPE is ignored,
/// so a closed stdout is an error we report, not a silent death.
///
/// A job command `start`s it before it opens anything: the three signals are blocked in every
/// thread (threads inherit the mask) and one thread takes them with `sigwait`, so no handler runs
/// in a random thread, and it works the same under ThreadSanitizer, which defers handlers. A stop
/// asked for while the job is still being built (an input slow to open) is kept and made as soon
/// as the job is `attach`ed; a second exits. Other commands keep the default dispositions: SIGINT
/// ends them.
final class SignalHandling: Sendable {
    /// Signals this soon after the first are the same stop: `timeout -s INT` and other supervisors
    /// signal the process and then its process group, so one stop arrives twice, microseconds apart.
    static let repeatWindowNanoseconds: UInt64 = 500_000_000

    /// The job's handlers (nil until `attach`, and again after `finish`), and whether a stop came.
    private struct State {
        var onFirst: (@Sendable () -> Void)?
        var onCut: (@Sendable () -> Void)?
        var stopAsked = false
        var attached = false
    }
    private let state = Locked(State())
    private let quiet: Bool

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

    /// Blocks SIGINT, SIGTERM and SIGUSR1 in the calling thread and every thread it starts later,
    /// and starts the thread that takes them. Call before any other thread starts.
    static func start(quiet: Bool) -> SignalHandling {
        var set = stopSignals
        // It returns an error only for an invalid `how`; SIG_BLOCK is valid.
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
        return SignalHandling(quiet: quiet)
    }

    private init(quiet: Bool) {
        self.quiet = quiet
        let thread = Thread { [self] in waitForSignals() }
        thread.name = "livemux-signals"
        thread.start()
    }

    /// The job is built: the first signal stops it (now, if one came already), SIGUSR1 cuts.
    func attach(stop: @escaping @Sendable () -> Void, cut: @escaping @Sendable () -> Void) {
        let now = state.withLock { s in
            s.attached = true
            s.onFirst = s.stopAsked ? nil : stop
            s.onCut = cut
            return s.stopAsked
        }
        if now { stop() }
    }

    /// Lets go of the handlers (and whatever job they hold) once the job is over: the signal thread
    /// lives until the process exits, and would keep the job's objects alive to the end.
    func finish() {
        state.withLock { s in
            s.onFirst = nil
            s.onCut = nil
        }
    }

    private func waitForSignals() {
        var set = Self.stopSignals
        var first: UInt64?
        while true {
            var sig: Int32 = 0
            guard sigwait(&set, &sig) == 0 else { continue }
            if sig == SIGUSR1 {
                state.withLock { $0.onCut }?()
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard let firstAt = first else {
                first = now
                let (stop, early) = state.withLock { s in
                    defer { (s.onFirst, s.stopAsked) = (nil, true) }
                    return (s.onFirst, !s.attached)
                }
                stop?()
                if early && !quiet { Terminal.warning("stopping as soon as the inputs are open (interrupt again to exit now)") }
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
