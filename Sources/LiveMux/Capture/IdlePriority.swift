import FFmpeg
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Idle scheduling priority for the capture threads of an unpaced recording, given back as soon
/// as the machine is busy.
///
/// Why: x264's sliced threads keep both cores busy except at their barriers, where one slice
/// waits for the other (about 1.5 ms of a free core per 720p frame on two cores). A capture
/// thread at normal priority preempts a slice thread, and the frame takes that much longer; at
/// `SCHED_IDLE` it runs only on a core nothing else wants, which is exactly those gaps. Measured
/// against the ffmpeg CLI: 1.05–1.07× at normal priority, 1.15–1.20× idle
/// (docs/benchmarks-notes.md).
///
/// The risk: while other processes keep the cores busy, an idle thread gets almost no CPU (a 5 s
/// encode beside two busy processes took 65 s instead of 1.3 s), and an unprivileged thread cannot
/// leave `SCHED_IDLE`. So this is used only when the process may put a thread back at normal
/// priority (CAP_SYS_NICE, or RLIMIT_NICE of 20 or more: checked by trying it on a scratch
/// thread), and a watchdog thread puts every lowered thread back, for the rest of the recording,
/// once one of them starves: it waited for a core through nearly all of a window, or it was
/// runnable at both ends of a window and hardly ran. The kernel counts both (the run time and the
/// run-queue delay in the thread's `schedstat`, the state in its `stat`); waiting on a queue does
/// not count. The delay is added only when the thread gets a core, hence the second test. A
/// lowered thread that needs most of a core (AAC beside cheap small-frame video) goes back too,
/// without a warning: it is on the critical path itself. Because the policy changes in the
/// kernel, a starved thread that holds a lock gets its fair share again at once and lets go of it.
///
/// Locking: `lock` guards `threads`, `nextKey` and `restored`; a thread unregisters itself under
/// it before it ends, so the watchdog never touches a thread that is gone.
final class IdlePriority: @unchecked Sendable {
    /// How often the watchdog looks. Beside x264 alone, a capture thread waits for a core for at
    /// most 0.78 of a window and runs at least 0.13 of any window it is runnable through (720p,
    /// three 30 s runs); beside busy processes it waits through all of it, or does not run.
    static let window: TimeInterval = 0.2
    static let starvingWait = 0.97
    static let starvingRun = 0.01
    /// A lowered thread that runs this share of two windows in a row needs more than the gaps:
    /// it is on the critical path itself, and at idle priority every wake-up of the encoder's
    /// threads preempts it. (Beside x264 at 720p capture runs at most 0.44 of a window, in the
    /// first; at 160x120 AAC runs 0.6–0.9 of each, and the recording took 18% longer idle.)
    static let heavyRun = 0.6

    /// What the kernel says about a thread: nanoseconds on a core and waiting for one, and
    /// whether it is runnable now.
    struct Sample {
        var ran: Int64
        var waited: Int64
        var runnable: Bool

        /// Whether a thread starved between `earlier` and this sample, `elapsed` ns apart.
        func starved(since earlier: Sample, elapsed: Int64) -> Bool {
            if Double(waited - earlier.waited) / Double(max(elapsed, 1)) >= IdlePriority.starvingWait { return true }
            return earlier.runnable && runnable && ranShare(since: earlier, elapsed: elapsed) < IdlePriority.starvingRun
        }

        func ranShare(since earlier: Sample, elapsed: Int64) -> Double {
            Double(ran - earlier.ran) / Double(max(elapsed, 1))
        }
    }

    private struct Lowered {
        let thread: pthread_t
        /// The thread's own `/proc/thread-self/schedstat` and `stat`, opened by it (they name
        /// the thread that opens them) and read again from offset 0.
        let schedstat: Int32
        let stat: Int32
        var last: Sample
        /// Windows in a row it ran at least `heavyRun` of.
        var heavyWindows = 0
    }
    private let lock = NSLock()
    private var threads: [Int: Lowered] = [:]
    private var nextKey = 0
    private var restored = false
    private let wake = DispatchSemaphore(value: 0)
    private let report: @Sendable (String) -> Void

    /// `report` hears, once, that the machine got busy and the threads went back to normal.
    init(report: @escaping @Sendable (String) -> Void) {
        self.report = report
    }

    /// Whether a thread of this process can go back from `SCHED_IDLE` to normal priority: tried
    /// once, on a thread made for it.
    static let canRestore: Bool = {
        final class Outcome: @unchecked Sendable {
            var value = false // written by the probe thread before `done` is signalled
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        let probe = Thread {
            outcome.value = setPolicy(pthread_self(), idle: true) && setPolicy(pthread_self(), idle: false)
            outcome.done.signal()
        }
        probe.name = "livemux-priority-probe"
        probe.start()
        outcome.done.wait()
        return outcome.value
    }()

    /// Starts the watchdog; call once, before the threads lower themselves.
    func start() {
        let thread = Thread { [self] in watch() }
        thread.name = "livemux-priority-watch"
        thread.start()
    }

    /// Runs `body` on the calling thread at idle priority (unless the machine was already found
    /// busy), and puts the thread back at normal priority once `body` returns.
    func runLowered<T>(_ body: () throws -> T) rethrows -> T {
        let key = lowerCurrentThread()
        defer { if let key { restore(key) } }
        return try body()
    }

    /// Puts every lowered thread back at normal priority for good, and ends the watchdog. Any
    /// thread, any number of times.
    func finish() {
        lock.lock()
        restoreAll()
        lock.unlock()
        wake.signal()
    }

    private func lowerCurrentThread() -> Int? {
        let schedstat = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        let stat = open("/proc/thread-self/stat", O_RDONLY | O_CLOEXEC)
        lock.lock()
        defer { lock.unlock() }
        guard !restored, let sample = Self.sample(schedstat: schedstat, stat: stat), Self.setPolicy(pthread_self(), idle: true) else {
            close(schedstat)
            close(stat)
            return nil
        }
        let key = nextKey
        nextKey += 1
        threads[key] = Lowered(thread: pthread_self(), schedstat: schedstat, stat: stat, last: sample)
        return key
    }

    private func restore(_ key: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard let lowered = threads.removeValue(forKey: key) else { return }
        _ = Self.setPolicy(lowered.thread, idle: false)
        close(lowered.schedstat)
        close(lowered.stat)
    }

    /// Caller holds `lock`.
    private func restoreAll() {
        restored = true
        for lowered in threads.values { _ = Self.setPolicy(lowered.thread, idle: false) }
    }

    private func watch() {
        var last = Timestamp.monotonicMicroseconds()
        while wake.wait(timeout: .now() + Self.window) == .timedOut {
            let now = Timestamp.monotonicMicroseconds()
            let elapsed = (now - last) * 1000
            last = now
            lock.lock()
            if restored {
                lock.unlock()
                return
            }
            var starving = false, heavy = false
            for (key, lowered) in threads {
                guard let sample = Self.sample(schedstat: lowered.schedstat, stat: lowered.stat) else { continue }
                if sample.starved(since: lowered.last, elapsed: elapsed) { starving = true }
                let heavyWindows = sample.ranShare(since: lowered.last, elapsed: elapsed) >= Self.heavyRun ? lowered.heavyWindows + 1 : 0
                if heavyWindows >= 2 { heavy = true }
                threads[key]!.heavyWindows = heavyWindows
                threads[key]!.last = sample
            }
            if starving || heavy { restoreAll() }
            lock.unlock()
            if starving {
                report("other processes keep the cores busy: capture is back at normal priority, so this recording runs slower")
            }
            if starving || heavy { return }
        }
    }

    /// `SCHED_IDLE` (5 in <linux/sched.h>; Glibc does not export it to Swift) or `SCHED_OTHER`.
    private static func setPolicy(_ thread: pthread_t, idle: Bool) -> Bool {
        var parameters = sched_param(sched_priority: 0)
        return pthread_setschedparam(thread, idle ? 5 : SCHED_OTHER, &parameters) == 0
    }

    /// `schedstat` is "ran waited timeslices"; in `stat` the state follows the name in
    /// parentheses, which may itself hold spaces and parentheses.
    private static func sample(schedstat: Int32, stat: Int32) -> Sample? {
        guard let times = contents(of: schedstat)?.split(separator: " "), times.count >= 2,
              let ran = Int64(times[0]), let waited = Int64(times[1]),
              let status = contents(of: stat), let nameEnd = status.lastIndex(of: ")") else { return nil }
        let state = status[status.index(after: nameEnd)...].dropFirst().first
        return Sample(ran: ran, waited: waited, runnable: state == "R")
    }

    /// What a /proc file says now, read again from its start.
    private static func contents(of fd: Int32) -> String? {
        guard fd >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
