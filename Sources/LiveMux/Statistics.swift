import Foundation
import FFmpeg

/// The pipeline's counters, updated by the capture and mux threads.
///
/// Locking: `inputLock` guards `inputs` (the per-stream counters the producers update for every
/// packet); `outputLock` guards `outputs` (what the mux thread updates for every chunk). Two
/// locks, so producers and the mux thread do not wait on each other several times per packet.
final class Statistics: @unchecked Sendable {
    private let inputLock = NSLock(), outputLock = NSLock()
    private var inputs = (video: StreamStatistics(), audio: StreamStatistics())
    private var outputs = StatisticsSnapshot()
    private let started = Timestamp.monotonicMicroseconds()

    private func updateStream(_ s: StreamKind, _ body: (inout StreamStatistics) -> Void) {
        inputLock.lock()
        if s == .video { body(&inputs.video) } else { body(&inputs.audio) }
        inputLock.unlock()
    }

    private func updateOutputs(_ body: (inout StatisticsSnapshot) -> Void) {
        outputLock.lock()
        body(&outputs)
        outputLock.unlock()
    }

    func countInput(_ s: StreamKind) { updateStream(s) { $0.framesIn += 1 } }
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
    func outputWrote(_ name: String, bytes: Int) { updateOutputs { $0.outputBytes[name, default: 0] += Int64(bytes) } }
    func muxed(mediaTime: Double, bytes: Int) {
        updateOutputs {
            $0.mediaTime = max($0.mediaTime, mediaTime)
            $0.bytesOut += Int64(bytes)
        }
    }

    var snapshot: StatisticsSnapshot {
        outputLock.lock()
        var copy = outputs
        outputLock.unlock()
        inputLock.lock()
        (copy.video, copy.audio) = inputs
        inputLock.unlock()
        copy.elapsed = Double(Timestamp.monotonicMicroseconds() - started) / 1e6
        return copy
    }
}
