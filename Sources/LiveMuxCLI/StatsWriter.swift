import Foundation
import LiveMux

/// `--stats FILE|-`: one JSON object a second (see `StatisticsSnapshot.jsonLine`), and a last one
/// over the whole run when the recording ends (`"final": true`). The path was checked with the
/// outputs (`OutputOptions.checkSideFile`); the file is created once the pipeline is built, so a
/// failed start creates nothing. Its timer runs on its own queue; the file is written only there.
final class StatsWriter: @unchecked Sendable {
    private var job: LiveJob?  // set by `start`, before the timer runs
    private let handle: FileHandle
    /// Made and resumed only by `start`: libdispatch traps when a source that was never resumed
    /// is released, which a failure before the recording started did.
    private var timer: DispatchSourceTimer?
    private let queue = DispatchQueue(label: "livemux-stats")
    private var previous: StatisticsSnapshot?  // touched only on `queue`
    private var finished = false               // touched only on `queue`

    /// Creates the file (truncating it only with `overwrite`), or uses stderr for "-".
    init(path: String, overwrite: Bool) throws {
        handle = path == "-" ? FileHandle.standardError : try OutputFile.create(path, overwrite: overwrite)
    }

    func start(_ job: LiveJob) {
        self.job = job
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 1, repeating: 1)
        // Weak: the timer is ours, and a strong self would keep both, and the pipeline, to the exit.
        timer.setEventHandler { [weak self] in self?.write() }
        self.timer = timer
        timer.resume()
    }

    /// Writes the last line, over the whole run, and stops.
    func finish() {
        queue.sync {
            guard !finished else { return }
            write(final: true)
            finished = true
            timer?.cancel()
            if handle !== FileHandle.standardError { try? handle.close() }
        }
    }

    private func write(final: Bool = false) {
        guard !finished, let job else { return }
        let s = job.statisticsSnapshot
        // On a terminal, stderr also carries the progress line (rewritten in place): clear it first.
        let clear = handle === FileHandle.standardError && Terminal.stderrIsTerminal ? "\r\u{1B}[K" : ""
        let line = clear + s.jsonLine(previous: final ? nil : previous, final: final) + "\n"
        previous = s
        try? handle.write(contentsOf: Data(line.utf8))
    }
}
