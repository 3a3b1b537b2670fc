import FFmpeg
import POSIX

/// The pipeline's counters, updated by the capture and mux threads.
///
/// Two locks: `inputs` (the per-stream counters the producers update for every packet) and
/// `outputs` (what the mux thread updates for every batch), so producers and the mux thread do not
/// wait on each other several times per packet; and a third, held only to read or move which
/// session measures the recording.
final class Statistics: Sendable {
    private let inputs = Locked((video: StreamStatistics(), audio: StreamStatistics()))
    private let outputs = Locked(StatisticsSnapshot())
    private let started = Timestamp.monotonicMicroseconds()
    /// The session whose packets are the recording's (video packets out, media time, bytes muxed,
    /// latency, late drops): the first, until every output of it stopped, then the next still
    /// writing, so the numbers go on with the outputs that do.
    private let measuringSession = Locked((measuring: 0, stopped: Set<Int>()))

    private func updateStream(_ s: StreamKind, _ body: (inout StreamStatistics) -> Void) {
        inputs.withLock { if s == .video { body(&$0.video) } else { body(&$0.audio) } }
    }

    private func updateOutputs(_ body: (inout StatisticsSnapshot) -> Void) { outputs.withLock { body(&$0) } }

    /// Whether `session`'s packets are the recording's now (a video lane asks per packet, a mux
    /// thread once a batch).
    func measures(_ session: Int) -> Bool { measuringSession.withLock { $0.measuring == session } }
    /// Every output of `session` stopped: if it measured, the next session still writing does from now on.
    func sessionStopped(_ session: Int) {
        measuringSession.withLock { m in
            m.stopped.insert(session)
            while m.stopped.contains(m.measuring) { m.measuring += 1 }
        }
    }

    func countInput(_ s: StreamKind) { updateStream(s) { $0.framesIn += 1 } }
    /// A frame placed at media time `time` (s), counted in.
    func countInput(_ s: StreamKind, placedAt time: Double) {
        updateStream(s) {
            $0.framesIn += 1
            $0.placedTime = max($0.placedTime, time)
        }
    }
    func countDropped(_ s: StreamKind, _ n: Int = 1) { updateStream(s) { $0.dropped += n } }
    func countOutputDropped(_ n: Int) { updateOutputs { $0.outputDropped += n } }
    func countEncoded(_ s: StreamKind, bytes: Int) {
        updateStream(s) {
            $0.packetsOut += 1
            $0.bytes += bytes
        }
    }
    /// A packet taken in as it was already encoded (`Muxer`): one count of it in and out.
    func countPassedThrough(_ s: StreamKind, bytes: Int) {
        updateStream(s) {
            $0.framesIn += 1
            $0.packetsOut += 1
            $0.bytes += bytes
        }
    }
    func countDuplicated(_ s: StreamKind) { updateStream(s) { $0.duplicated += 1 } }
    func countTimestampRepair(_ s: StreamKind) { updateStream(s) { $0.timestampRepairs += 1 } }
    func recordLatency(_ microseconds: Int64) { updateOutputs { $0.latency.add(microseconds) } }
    /// Outputs by key (an output's id, `o0`; a caller's own sink by its name) and the label each
    /// is shown by, in the order given; each is `writing` until it finishes or fails. A key
    /// already known keeps its place (a recording's sessions each give theirs after the whole list).
    func outputsGiven(_ outputs: [(key: String, label: String)]) {
        updateOutputs { s in
            for (key, label) in outputs {
                if s.outputStates[key] == nil { s.outputKeys.append(key) }
                s.outputStates[key] = .writing
                s.outputLabels[key] = label
            }
        }
    }
    /// What became of output `key` so far; nil when no output has that key.
    func outputState(_ key: String) -> OutputState? { outputs.withLock { $0.outputStates[key] } }
    func outputStopped(_ key: String, reason: String) {
        updateOutputs { $0.outputStates[key] = .failed(reason) }
        outputs.broadcast()
    }
    /// Its trailer went out and its sink closed; a failure said before stays.
    func outputFinished(_ key: String) {
        updateOutputs { s in if s.outputStates[key]?.isFailed != true { s.outputStates[key] = .finished } }
        outputs.broadcast()
    }
    /// Waits until output `key` finished or failed, at most `seconds`; its state then.
    func waitUntilOutputEnded(_ key: String, seconds: Double) -> OutputState? {
        let deadline = Timestamp.monotonicMicroseconds() + Int64(seconds * 1e6)
        return outputs.withLock(waitingUntil: { $0.outputStates[key].map { !$0.isGoing } ?? true }, deadline: deadline) { s, _ in s.outputStates[key] }
    }
    func outputWrote(_ key: String, bytes: Int) { updateOutputs { $0.outputBytes[key, default: 0] += Int64(bytes) } }
    func segmentClosed(_ record: SegmentRecord) { updateOutputs { $0.segments.append(record) } }
    func muxed(mediaTime: Double, bytes: Int) {
        updateOutputs {
            $0.mediaTime = max($0.mediaTime, mediaTime)
            $0.bytesOut += Int64(bytes)
        }
    }

    /// Warnings kept for `--stats` and the dashboard: enough for a page to show a burst.
    static let recentWarnings = 20
    static let recentChanges = 20

    /// A change made through the control API.
    func changed(_ event: JobEvent) {
        let elapsed = Double(Timestamp.monotonicMicroseconds() - started) / 1e6
        updateOutputs { s in
            s.changes.append(JobChange(elapsed: elapsed, event: event))
            if s.changes.count > Self.recentChanges { s.changes.removeFirst() }
        }
    }

    func warned(_ message: String) {
        let elapsed = Double(Timestamp.monotonicMicroseconds() - started) / 1e6
        updateOutputs { s in
            s.warnings.append(RecentWarning(elapsed: elapsed, message: message))
            if s.warnings.count > Self.recentWarnings { s.warnings.removeFirst() }
        }
    }

    var snapshot: StatisticsSnapshot {
        var copy = outputs.withLock { $0 }
        (copy.video, copy.audio) = inputs.withLock { $0 }
        copy.elapsed = Double(Timestamp.monotonicMicroseconds() - started) / 1e6
        return copy
    }
}
