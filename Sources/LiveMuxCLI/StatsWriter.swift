import Foundation
import LiveMux

/// `--stats FILE|-`: one JSON object a second (see `StatisticsSnapshot.jsonLine`), and a last one
/// over the whole run when the recording ends (`"final": true`). The file is created before the recording starts, so a bad path is
/// refused before any output exists. Its timer runs on its own queue; the file is written only there.
final class StatsWriter: @unchecked Sendable {
    private var pipeline: Pipeline?  // set by `start`, before the timer runs
    private let handle: FileHandle
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "livemux-stats")
    private var previous: StatisticsSnapshot?  // touched only on `queue`
    private var finished = false               // touched only on `queue`

    /// Creates (truncates) the file, or uses stderr for "-"; throws a one-line message if it cannot.
    init(path: String) throws {
        if path == "-" {
            handle = FileHandle.standardError
        } else {
            guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
                throw UsageError("cannot create the --stats file '\(path)' (check the directory exists and is writable)")
            }
            handle = h
        }
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 1, repeating: 1)
    }

    func start(_ pipeline: Pipeline) {
        self.pipeline = pipeline
        // Weak: the timer is ours, and a strong self would keep both, and the pipeline, to the exit.
        timer.setEventHandler { [weak self] in self?.write() }
        timer.resume()
    }

    /// Writes the last line, over the whole run, and stops.
    func finish() {
        queue.sync {
            guard !finished else { return }
            write(final: true)
            finished = true
            timer.cancel()
            if handle !== FileHandle.standardError { try? handle.close() }
        }
    }

    private func write(final: Bool = false) {
        guard !finished, let pipeline else { return }
        let s = pipeline.statisticsSnapshot
        // On a terminal, stderr also carries the progress line (rewritten in place): clear it first.
        let clear = handle === FileHandle.standardError && Terminal.stderrIsTerminal ? "\r\u{1B}[K" : ""
        let line = clear + s.jsonLine(previous: final ? nil : previous, final: final) + "\n"
        previous = s
        try? handle.write(contentsOf: Data(line.utf8))
    }
}
