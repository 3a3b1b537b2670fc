import Foundation
import FFmpeg

/// A consistent copy of the pipeline's counters.
public struct StatisticsSnapshot: Sendable {
    public var video = StreamStatistics()
    public var audio = StreamStatistics()
    /// DTS of the last packet muxed, in seconds of media.
    public var mediaTime: Double = 0
    /// Bytes handed to the sinks of the output measured (the first given that is still writing).
    public var bytesOut: Int64 = 0
    /// Seconds since the pipeline started.
    public var elapsed: Double = 0
    /// Capture → bytes handed to the sinks, per media packet (µs).
    public var latency = LatencyHistogram()
    /// Bytes handed to each output's sinks, by output key (its id, `o0`; a viewers' stream by its path).
    public var outputBytes: [String: Int64] = [:]
    /// Every output's key, in the order given.
    public var outputKeys: [String] = []
    /// What each output is shown as (file path, "stdout", masked URL), by key: two pushes to one
    /// service with two keys have one label and two keys.
    public var outputLabels: [String: String] = [:]
    /// What became of each output so far, by key.
    public var outputStates: [String: OutputState] = [:]

    /// Takes each URL output's link and connection, and tells the truth of each output from one
    /// place: a URL output still going is `connecting`, `writing` or `reconnecting N of M` as its
    /// connection is, and its bytes are those its connections took, not those queued for it.
    public mutating func takeNetwork(_ outputs: [NetworkOutputSnapshot]) {
        network = outputs
        for o in outputs {
            outputBytes[o.id] = o.sentBytes
            guard outputStates[o.id]?.isGoing == true else { continue }
            switch o.state {
            case .connecting: outputStates[o.id] = .connecting
            case .reconnecting(let attempt, let of): outputStates[o.id] = .reconnecting(attempt: attempt, of: of)
            case .live, .givenUp, .ended: outputStates[o.id] = .writing  // given up or ended: the mux thread says how it ended
            }
        }
    }

    /// How output `key` is named where outputs are listed by name (`output_states`): its label,
    /// with its key when another output has the same label.
    public func outputName(_ key: String) -> String {
        guard let label = outputLabels[key] else { return key }
        return outputLabels.contains { $0.key != key && $0.value == label } ? "\(label) (\(key))" : label
    }
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
    /// Every source, in the order of their labels (video first), with audio levels.
    public var sources: [SourceSnapshot] = []

    /// Each network output's backlog and link rate.
    public var network: [NetworkOutputSnapshot] = []
    /// The video encoder's bit rate now (the adaptive bit rate's target), bits per second; 0 without video.
    public var videoBitRate = 0

    /// Media seconds per wall-clock second.
    /// Whether every kind of stream the sources give has its first packet encoded (true without
    /// sources: a remux has none, and nothing waits for it).
    public var everyStreamStarted: Bool {
        sources.allSatisfy { ($0.kind == .video ? video : audio).packetsOut > 0 }
    }
    public var speed: Double { elapsed > 0 ? mediaTime / elapsed : 0 }
    public var dropped: Int { video.dropped + audio.dropped }
    /// Chunks network outputs and HTTP viewers dropped because they fell behind.
    public var outputDropped = 0
    /// Every segment closed complete so far, in the order they closed.
    public var segments: [SegmentRecord] = []
    /// The last warnings said, oldest first (at most `Statistics.recentWarnings`).
    public var warnings: [RecentWarning] = []
    /// The last changes made through the control API, oldest first (at most `Statistics.recentChanges`).
    public var changes: [JobChange] = []
}
