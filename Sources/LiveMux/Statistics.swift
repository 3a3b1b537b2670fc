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

    /// Media seconds per wall-clock second.
    public var speed: Double { elapsed > 0 ? mediaTime / elapsed : 0 }
    public var dropped: Int { video.dropped + audio.dropped }
    /// Chunks network outputs and HTTP viewers dropped because they fell behind.
    public var outputDropped = 0
}

/// The pipeline's counters, updated by the capture and mux threads. Locking: `lock` guards `data`.
final class Statistics: @unchecked Sendable {
    private let lock = NSLock()
    private var data = StatisticsSnapshot()
    private let started = Timestamp.monotonicMicroseconds()

    private func update(_ body: (inout StatisticsSnapshot) -> Void) {
        lock.lock()
        body(&data)
        lock.unlock()
    }

    private static func path(_ s: StreamKind) -> WritableKeyPath<StatisticsSnapshot, StreamStatistics> {
        s == .video ? \.video : \.audio
    }

    func countInput(_ s: StreamKind) { update { $0[keyPath: Self.path(s)].framesIn += 1 } }
    func countDropped(_ s: StreamKind, _ n: Int = 1) { update { $0[keyPath: Self.path(s)].dropped += n } }
    func countOutputDropped(_ n: Int) { update { $0.outputDropped += n } }
    func countEncoded(_ s: StreamKind, bytes: Int) {
        update {
            $0[keyPath: Self.path(s)].packetsOut += 1
            $0[keyPath: Self.path(s)].bytes += bytes
        }
    }
    func countDuplicated(_ s: StreamKind) { update { $0[keyPath: Self.path(s)].duplicated += 1 } }
    func countTimestampRepair(_ s: StreamKind) { update { $0[keyPath: Self.path(s)].timestampRepairs += 1 } }
    func recordLatency(_ microseconds: Int64) { update { $0.latency.add(microseconds) } }
    func outputWrote(_ name: String, bytes: Int) { update { $0.outputBytes[name, default: 0] += Int64(bytes) } }
    func muxed(mediaTime: Double, bytes: Int) {
        update {
            $0.mediaTime = max($0.mediaTime, mediaTime)
            $0.bytesOut += Int64(bytes)
        }
    }

    var snapshot: StatisticsSnapshot {
        lock.lock()
        var copy = data
        lock.unlock()
        copy.elapsed = Double(Timestamp.monotonicMicroseconds() - started) / 1e6
        return copy
    }
}
