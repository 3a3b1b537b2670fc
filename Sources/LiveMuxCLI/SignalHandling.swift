import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM while a job runs: the first asks for a graceful stop, a second exits at
/// once with 130. SIGUSR1 cuts the segments (`onCut`), as often as it comes. SIGPIPE is ignored,
/// so a closed stdout is an error we report, not a silent death.
///
/// The three signals are held from the process's start (the executable's preinit function, and
/// the first line of `CLI.main`); a job command `start`s the thread that takes them before it
/// opens anything, and every other command releases them. They stay blocked in every thread
/// (threads inherit the mask) and one thread takes them with `sigwait`, so no handler runs in a
/// random thread, and it works the same under ThreadSanitizer, which defers handlers. The stop is
/// made once the job is `attach`ed and has its first frames (at most `firstFramesWaitNanoseconds`
/// after both), so a stop in the first milliseconds, or while an input is slow to open, still
/// leaves a file that plays; a second exits. Other commands keep the default dispositions:
/// SIGINT ends them.
final class SignalHandling: Sendable {
    /// Signals this soon after the first are the same stop: `timeout -s INT` and other supervisors
    /// signal the process and then its process group, so one stop arrives twice, microseconds apart.
    static let repeatWindowNanoseconds: UInt64 = 500_000_000

    /// How long a stop waits for the job's first frames (ns), from the later of the signal and
    /// the job being built: a source that is open but silent (a FIFO nobody writes) must not hold
    /// the stop for long.
    static let firstFramesWaitNanoseconds: UInt64 = 2_000_000_000
    /// How often a stop that waits looks whether the first frames are in (ns).
    static let firstFramesPollNanoseconds = 10_000_000

    /// The job, from `attach` to `finish`: how to stop it and whether it has its first frames.
    private struct Job {
        let stop: @Sendable () -> Void
        let started: @Sendable () -> Bool
        let cut: @Sendable () -> Void
        let attachedAt: UInt64
    }

    private struct State {
        var job: Job?
        var attached = false
        /// When the first SIGINT or SIGTERM came (ns, monotonic), and whether its stop was made.
        var stopAskedAt: UInt64?
        var stopMade = false
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

    /// Blocks SIGINT, SIGTERM and SIGUSR1 the moment the process starts (before any other thread),
    /// so one that comes while the command line is read stays pending for the signal thread: a
    /// job started with `&` from a script inherits SIGINT ignored, and the kernel discards an
    /// ignored signal that is not blocked (a stop 20 ms after the start was lost for the whole -t).
    static func hold() { mask(SIG_BLOCK) }

    /// Gives a command that does not run a job the dispositions it inherited (SIGINT ends
    /// `report`); a signal held meanwhile is taken now.
    static func release() { mask(SIG_UNBLOCK) }

    private static func mask(_ how: Int32) {
        var set = stopSignals
        // It returns an error only for an invalid `how`.
        _ = pthread_sigmask(how, &set, nil)
    }

    /// Starts the thread that takes SIGINT, SIGTERM and SIGUSR1 (held since `hold`, in every
    /// thread started since: threads inherit the mask).
    static func start(quiet: Bool) -> SignalHandling {
        hold()
        return SignalHandling(quiet: quiet)
    }

    private init(quiet: Bool) {
        self.quiet = quiet
        let thread = Thread { [self] in waitForSignals() }
        thread.name = "livemux-signals"
        thread.start()
    }

    /// The job is built: SIGINT and SIGTERM stop it once it has its first frames (`started`),
    /// SIGUSR1 cuts.
    func attach(stop: @escaping @Sendable () -> Void, started: @escaping @Sendable () -> Bool,
                cut: @escaping @Sendable () -> Void) {
        let job = Job(stop: stop, started: started, cut: cut, attachedAt: DispatchTime.now().uptimeNanoseconds)
        state.withLock { s in
            s.job = job
            s.attached = true
        }
    }

    /// Lets go of the handlers (and whatever job they hold) once the job is over: the signal thread
    /// lives until the process exits, and would keep the job's objects alive to the end.
    func finish() {
        state.withLock { $0.job = nil }
    }

    /// The stop asked for, made if its job is built and has its first frames or waited long
    /// enough; whether one is still to be made.
    private func makeStopWhenStarted() -> Bool {
        let (job, askedAt) = state.withLock { s in s.stopMade ? (nil, nil) : (s.job, s.stopAskedAt) }
        guard let askedAt else { return false }
        guard let job else { return state.withLock { !$0.attached } }
        let deadline = max(askedAt, job.attachedAt) + Self.firstFramesWaitNanoseconds
        guard job.started() || DispatchTime.now().uptimeNanoseconds >= deadline else { return true }
        state.withLock { $0.stopMade = true }
        job.stop()
        return false
    }

    /// The next signal; while a stop is still to be made, wakes every `firstFramesPollNanoseconds`
    /// to make it (nil then).
    private func nextSignal(_ set: inout sigset_t) -> Int32? {
        guard makeStopWhenStarted() else {
            var sig: Int32 = 0
            return sigwait(&set, &sig) == 0 ? sig : nil
        }
        var timeout = timespec(tv_sec: 0, tv_nsec: Self.firstFramesPollNanoseconds)
        let sig = sigtimedwait(&set, nil, &timeout)
        return sig > 0 ? sig : nil
    }

    private func waitForSignals() {
        var set = Self.stopSignals
        var first: UInt64?
        while true {
            guard let sig = nextSignal(&set) else { continue }
            if sig == SIGUSR1 {
                state.withLock { $0.job?.cut }?()
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard let firstAt = first else {
                first = now
                let early = state.withLock { s in
                    s.stopAskedAt = now
                    return !s.attached
                }
                if early && !quiet { Terminal.warning("stopping as soon as the inputs are open and their first frames recorded (interrupt again to exit now)") }
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
