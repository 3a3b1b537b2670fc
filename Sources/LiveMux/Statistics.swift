import Foundation
import FFmpeg

/// Counters for one stream.
public struct StreamStatistics: Sendable, Equatable {
    /// Frames that arrived from capture.
    public var framesIn = 0
    /// Encoded packets queued for the muxer.
    public var packetsOut = 0
    /// Frames or packets dropped (before the start, duplicate timestamps, late).
    public var dropped = 0
    /// Encoded bytes.
    public var bytes = 0
    /// Frames encoded twice to fill a slot a drift correction left empty.
    public var duplicated = 0
    /// Input timestamps that went backwards or repeated: repaired (audio) or dropped (video).
    public var timestampRepairs = 0
}

/// A consistent copy of the pipeline's counters.
public struct StatisticsSnapshot: Sendable {
    public var video = StreamStatistics()
    public var audio = StreamStatistics()
    /// DTS of the last packet muxed, in seconds of media.
    public var mediaTime: Double = 0
    /// Bytes handed to the sinks (of the first output).
    public var bytesOut: Int64 = 0
    /// Seconds since the pipeline started.
    public var elapsed: Double = 0
    /// Capture → bytes handed to the sinks, per media packet (µs).
    public var latency = LatencyHistogram()
    /// Bytes handed to each output's sinks, by output name (file path or "stdout").
    public var outputBytes: [String: Int64] = [:]
    /// Packets waiting in the mux queue, per stream.
    public var queueDepths: [StreamKind: Int] = [:]
    /// How far the audio clock has drifted from the capture clock (ms).
    public var driftMs: Double = 0
    /// Audio − video on the timeline after the drift correction (ms).
    public var avOffsetMs: Double = 0
    /// Whole-frame steps the video made to follow the audio clock.
    public var driftCorrections = 0
    /// The audio clock's rate against the capture clock (parts per million).
    public var driftPPM: Double = 0
    /// The live devices (cameras, screens, microphones).
    public var devices: [DeviceSnapshot] = []

    /// Media seconds per wall-clock second.
    public var speed: Double { elapsed > 0 ? mediaTime / elapsed : 0 }
    public var dropped: Int { video.dropped + audio.dropped }
    /// Chunks network outputs and HTTP viewers dropped because they fell behind.
    public var outputDropped = 0
}

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
