import Foundation
import LiveMux

/// The progress line on stderr, like ffmpeg's: rewritten in place on a terminal, a plain line
/// every few seconds otherwise. Its timer runs on its own queue.
final class ProgressLine: @unchecked Sendable {
    private let snapshot: @Sendable () -> StatisticsSnapshot
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "livemux-progress")
    private var finished = false  // touched only on `queue`
    /// The last plain line written (not on a terminal), touched only on `queue`: a periodic line
    /// that came just before the sources ended already says what the last one would.
    private var lastLine: String?
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
            let s = snapshot()
            // Every source ended: the last line, with the run's final numbers, is about to follow.
            guard !Self.sourcesEnded(s) else { return }
            let text = line(s)
            if !Terminal.stderrIsTerminal { lastLine = text }
            Terminal.write(Terminal.stderrIsTerminal ? "\r\(text)\u{1B}[K" : text + "\n")
        }
        timer.resume()
    }

    func finish() {
        queue.sync {
            guard !finished else { return }
            finished = true
            timer.cancel()
            let text = line(snapshot())
            guard Terminal.stderrIsTerminal || text != lastLine else { return }
            Terminal.write((Terminal.stderrIsTerminal ? "\r" : "") + text + "\n")
        }
    }

    private func line(_ s: StatisticsSnapshot) -> String { remux ? Self.formatRemux(s) : Self.format(s) }

    /// Whether the recording is over but for its trailers: sources are known and each has ended.
    static func sourcesEnded(_ s: StatisticsSnapshot) -> Bool {
        !s.sources.isEmpty && s.sources.allSatisfy { $0.state == .ended }
    }

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
        s.outputKeys.enumerated().map { i, key in s.outputStates[key]?.isFailed == true ? " out\(i + 1)=failed" : "" }.joined()
    }

    static func format(_ s: StatisticsSnapshot) -> String {
        let t = max(0, s.mediaTime)
        let fps = s.elapsed > 0 ? Double(s.video.packetsOut) / s.elapsed : 0
        let kbps = t > 0 ? Double(s.bytesOut) * 8 / t / 1000 : 0
        // Frames, their rate and the A/V offset mean nothing without video.
        let hasVideo = s.video.packetsOut > 0 || s.sources.contains { $0.kind == .video }
        let video = hasVideo ? String(format: " frames=%d fps=%.1f", s.video.packetsOut, fps) : ""
        let offset = hasVideo ? String(format: " av=%+.1fms", s.avOffsetMs) : ""
        let line = String(format: "time=%@%@ bitrate=%.1fkbits/s speed=%.2fx dropped=%d%@ latency99=%.0fms",
                          clock(t), video, kbps, s.speed, s.dropped, offset, Double(s.latency.percentile(0.99)) / 1000)
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
            if source.state == .reopening || source.state == .leftOut { return "\(source.label)=\(source.state.description.replacingOccurrences(of: " ", with: "-"))" }
            if source.muted { return "\(source.label)=muted" }
            return source.peakDBFS.map { String(format: "%@=%.0fdB", source.label, $0) }
        }
        if !named.isEmpty { extra += " " + named.joined(separator: " ") }
        return line + extra + failedOutputs(s)
    }
}
