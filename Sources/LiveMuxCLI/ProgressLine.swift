import Foundation
import LiveMux

/// The progress line on stderr, like ffmpeg's: rewritten in place on a terminal, a plain line
/// every few seconds otherwise. Its timer runs on its own queue.
final class ProgressLine: @unchecked Sendable {
    private let snapshot: @Sendable () -> StatisticsSnapshot
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "livemux-progress")
    private var finished = false  // touched only on `queue`

    /// A progress line over any counters (`livemux mux` passes its muxer's).
    init(snapshot: @escaping @Sendable () -> StatisticsSnapshot) {
        self.snapshot = snapshot
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = Terminal.stderrIsTerminal ? 0.5 : 5
        timer.schedule(deadline: .now() + interval, repeating: interval)
    }

    func start() {
        // Weak: the timer is ours, and a strong self would keep both, and the job, to the exit.
        timer.setEventHandler { [weak self] in
            guard let self, !finished else { return }
            Terminal.write(Terminal.stderrIsTerminal ? "\r\(Self.format(snapshot()))\u{1B}[K" : Self.format(snapshot()) + "\n")
        }
        timer.resume()
    }

    func finish() {
        queue.sync {
            guard !finished else { return }
            finished = true
            timer.cancel()
            Terminal.write((Terminal.stderrIsTerminal ? "\r" : "") + Self.format(snapshot()) + "\n")
        }
    }

    static func format(_ s: StatisticsSnapshot) -> String {
        let t = max(0, s.mediaTime)
        let clock = String(format: "%02d:%02d:%05.2f", Int(t) / 3600, Int(t) / 60 % 60, t.truncatingRemainder(dividingBy: 60))
        let fps = s.elapsed > 0 ? Double(s.video.packetsOut) / s.elapsed : 0
        let kbps = t > 0 ? Double(s.bytesOut) * 8 / t / 1000 : 0
        let line = String(format: "time=%@ frames=%d fps=%.1f bitrate=%.1fkbits/s speed=%.2fx dropped=%d av=%+.1fms latency99=%.0fms",
                          clock, s.video.packetsOut, fps, kbps, s.speed, s.dropped, s.avOffsetMs,
                          Double(s.latency.percentile(0.99)) / 1000)
        // Chunks slow network outputs or viewers skipped (the recording itself lost nothing).
        return s.outputDropped > 0 ? line + " output-dropped=\(s.outputDropped)" : line
    }
}
