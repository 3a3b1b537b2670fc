import Foundation
import LiveMux

/// The progress line on stderr, like ffmpeg's: rewritten in place on a terminal, a plain line
/// every few seconds otherwise. Its timer runs on its own queue.
final class ProgressLine: @unchecked Sendable {
    private let snapshot: @Sendable () -> StatisticsSnapshot
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "livemux-progress")
    private var finished = false  // touched only on `queue`
    private let remux: Bool

    /// A progress line over any counters (`livemux mux` passes its muxer's, with `remux`).
    init(remux: Bool = false, snapshot: @escaping @Sendable () -> StatisticsSnapshot) {
        self.snapshot = snapshot
        self.remux = remux
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = Terminal.stderrIsTerminal ? 0.5 : 5
        timer.schedule(deadline: .now() + interval, repeating: interval)
    }

    func start() {
        // Weak: the timer is ours, and a strong self would keep both, and the job, to the exit.
        timer.setEventHandler { [weak self] in
            guard let self, !finished else { return }
            Terminal.write(Terminal.stderrIsTerminal ? "\r\(line())\u{1B}[K" : line() + "\n")
        }
        timer.resume()
    }

    func finish() {
        queue.sync {
            guard !finished else { return }
            finished = true
            timer.cancel()
            Terminal.write((Terminal.stderrIsTerminal ? "\r" : "") + line() + "\n")
        }
    }

    private func line() -> String { remux ? Self.formatRemux(snapshot()) : Self.format(snapshot()) }

    private static func clock(_ t: Double) -> String {
        String(format: "%02d:%02d:%05.2f", Int(t) / 3600, Int(t) / 60 % 60, t.truncatingRemainder(dividingBy: 60))
    }

    /// `livemux mux`: a file has no capture latency and no frame rate worth showing (it is read as
    /// fast as it goes), so: media time, packets per stream, bytes, speed, dropped.
    static func formatRemux(_ s: StatisticsSnapshot) -> String {
        let t = max(0, s.mediaTime)
        return String(format: "time=%@ packets=%d video=%d audio=%d size=%.0fkB speed=%.1fx dropped=%d",
                      clock(t), s.video.packetsOut + s.audio.packetsOut, s.video.packetsOut, s.audio.packetsOut,
                      Double(s.bytesOut) / 1000, s.speed, s.dropped) + failedOutputs(s)
    }

    /// ` out2=failed` for each output that failed while the others go on, numbered in the order
    /// given from 1 (the error line at the end names each with its fate).
    static func failedOutputs(_ s: StatisticsSnapshot) -> String {
        s.outputNames.enumerated().map { i, name in s.outputStates[name]?.isFailed == true ? " out\(i + 1)=failed" : "" }.joined()
    }

    static func format(_ s: StatisticsSnapshot) -> String {
        let t = max(0, s.mediaTime)
        let fps = s.elapsed > 0 ? Double(s.video.packetsOut) / s.elapsed : 0
        let kbps = t > 0 ? Double(s.bytesOut) * 8 / t / 1000 : 0
        let line = String(format: "time=%@ frames=%d fps=%.1f bitrate=%.1fkbits/s speed=%.2fx dropped=%d av=%+.1fms latency99=%.0fms",
                          clock(t), s.video.packetsOut, fps, kbps, s.speed, s.dropped, s.avOffsetMs,
                          Double(s.latency.percentile(0.99)) / 1000)
        // Chunks slow network outputs or viewers skipped (the recording itself lost nothing).
        var extra = s.outputDropped > 0 ? " output-dropped=\(s.outputDropped)" : ""
        // With network outputs: the video bit rate now (it follows the first URL's link) and
        // how far behind each output is.
        if !s.network.isEmpty {
            extra += String(format: " vbitrate=%.0fk backlog=", Double(s.videoBitRate) / 1000)
                + s.network.map { String(format: "%.0fms", $0.backlogMs) }.joined(separator: ",")
        }
        // Each audio source's level, and a device that is away by its state.
        let named = s.sources.compactMap { source -> String? in
            if source.state == "reopening" || source.state == "left out" { return "\(source.label)=\(source.state.replacingOccurrences(of: " ", with: "-"))" }
            return source.peakDBFS.map { String(format: "%@=%.0fdB", source.label, $0) }
        }
        if !named.isEmpty { extra += " " + named.joined(separator: " ") }
        return line + extra + failedOutputs(s)
    }
}
