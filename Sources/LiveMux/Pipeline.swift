import Foundation
import FFmpeg

/// The live pipeline: capture threads → encoders → a `MuxSession` (mux queue, mux thread, outputs).
/// When files, stdout or viewers sit beside a URL output whose bit rate follows its link, they get
/// a video encode and a session of their own at `--vbitrate` (`encodesApart`): a failing push
/// never degrades the local recording.
///
/// `init` does everything that can fail on bad input — opening the sources, the encoders and the
/// muxers, and creating the output files — so a bad configuration is refused before anything is
/// written. `start` runs the threads; `stop` ends them gracefully (encoders flushed, queues drained,
/// trailers written); `wait` returns when all is done and throws the first failure.
public final class Pipeline: LiveJob, @unchecked Sendable {
    // The fields are set in init and then only read; the threads own their parts.
    /// The sources by kind, v0 and a0 first, for their labels in stats.
    private let opened: RecordingSources
    /// Every source, each once.
    private var sources: [CaptureSource] { opened.all }
    /// What sits between the sources and the encoders (mix, composition, filters, level meters).
    private let stages: SourceStages
    private let encoderThreads: [EncoderThread]
    /// The first runs the producers and measures the recording; a second, if any, is the URL
    /// outputs' with their own video encode.
    private let sessions: [MuxSession]
    private var session: MuxSession { sessions[0] }
    /// Every output in the order given, for the last line of their fates.
    private let outputNames: [String]
    private let timeline: Timeline
    private var stopSignal: StopSignal { session.stopSignal }
    private let statistics: Statistics
    private let adaptive: AdaptiveBitrate?
    private let videoBitRate: Int
    private var started = false

    /// - Parameter report: receives warnings (an output that stopped while others go on).
    public init(_ config: RecordConfiguration, quiet: Bool = false,
                report given: @escaping @Sendable (String) -> Void = { _ in }) throws {
        LogLevel.applyChosen()
        try Self.validate(config)
        let statistics = Statistics()
        self.statistics = statistics
        // Every warning is also kept, for `--stats` and the dashboard.
        let report: @Sendable (String) -> Void = { message in
            statistics.warned(message)
            given(message)
        }
        let wantVideo = config.recordVideo, wantAudio = config.recordAudio
        var kinds: [StreamKind] = []
        if wantVideo { kinds.append(.video) }
        if wantAudio { kinds.append(.audio) }

        // Sources first: a missing device is the likeliest mistake.
        let opened = try RecordingSources(config, report: report)
        let sources = opened.all
        if sources.contains(where: \.isLive) { sources.forEach { $0.shareClockWithLiveInput() } }
        // Unpaced, nobody waits for a packet: the mux thread is woken once per batch, not per
        // packet, and so takes a core from the video encoder less often.
        let unpaced = !sources.contains { $0.isLive || $0.isPaced }
        let adaptive = Self.adaptiveBitrate(config, report: report)
        var outputs = config.outputs
        outputs.sendBufferBytes = Self.sendBufferBytes(config)
        // The session that measures comes first: the local outputs' when they are apart.
        let split = outputs.splitByNetwork
        let outputGroups = Self.encodesApart(config, adaptive: adaptive) ? [split.local, split.network] : [outputs]
        let queues = outputGroups.map { _ in
            MuxQueue(streams: kinds, capacity: config.queueCapacity, singleProducer: sources.count == 1 && kinds.count > 1,
                     wakeBatch: unpaced ? 16 : 1, startAtZero: true)
        }
        let timeline = Timeline(videoSetsBase: wantVideo, separateThreads: opened.video.first !== opened.audio.first)
        // Each stream keeps its first source's format unless the options ask for another.
        let sourceFormat = { (kind: StreamKind) in (kind == .video ? opened.video : opened.audio).first?.format ?? SourceFormat() }
        var videoFormat = wantVideo ? VideoFormat.resolve(config.video, source: sourceFormat(.video), report: report) : nil
        let audioFormat = wantAudio ? AudioFormat.resolve(config.audio, source: sourceFormat(.audio), report: report) : nil
        // Several sources of a kind, or filters: graphs between the sources and the encoders. A
        // graph that makes another size (side by side, a crop) sets the picture's, unless --size.
        let graphs = try SourceGraphs(opened, composition: config.composition, videoFormat: videoFormat, audioFormat: audioFormat)
        if let size = graphs.videoOutputSize, config.video.width == nil {
            (videoFormat!.width, videoFormat!.height) = (size.width & ~1, size.height & ~1)
        }
        // One encode per session; only the one whose outputs are URLs follows the link.
        let lanes = try videoFormat.map { format in
            try zip(outputGroups, queues).enumerated().map { i, group in
                try VideoLane(settings: config.video, format: format, queue: group.1,
                              adaptive: group.0.primaryNetworkURL != nil ? adaptive : nil, session: i,
                              statistics: statistics, quiet: quiet)
            }
        } ?? []
        // Frames for the dashboard's snapshot, when there is a dashboard.
        let frames = wantVideo && config.outputs.listen != nil ? FrameTap() : nil
        let video = videoFormat.map { VideoEncoder(format: $0, lanes: lanes, timeline: timeline, statistics: statistics, duration: config.duration,
                                                   segments: config.outputs.segments, frames: frames) }
        let audio = try audioFormat.map {
            try AudioEncoder(settings: config.audio, format: $0, timeline: timeline, queues: queues, statistics: statistics, duration: config.duration)
        }
        let audioStream = try audio?.streamDescription()
        let stages = try SourceStages(opened, graphs: graphs, audioFormat: audioFormat, video: video, audio: audio, live: !unpaced)
        // The outputs in the order given, before each session names its own (local first).
        statistics.outputsGiven(config.outputs.destinations.map(\.destination.description))
        // Live (pipe) ASF gets small packets: a payload waits in the open ASF packet until later
        // ones fill it, so 1400 bytes instead of 3200 cut that wait (docs/latency.md).
        sessions = try outputGroups.indices.map { i in
            var streams: [ContainerWriter.StreamDescription] = []
            if !lanes.isEmpty { streams.append(try lanes[i].streamDescription()) }
            if let audioStream { streams.append(audioStream) }
            return try MuxSession(queue: queues[i], outputs: outputGroups[i], streams: streams,
                                  streamingASFPacketSize: MuxSession.liveASFPacketSize, statistics: statistics, index: i,
                                  adaptive: adaptive, report: report)
        }
        outputNames = config.outputs.destinations.map(\.destination.description)
        // Video encodes on a thread of its own, overlapping capture; audio is cheap enough to
        // encode on its capture thread. A live screen or camera is never kept waiting by a slow
        // frame's encode: a grab that waits is taken late, and shows a later instant than its slot.
        let liveVideo = sources.contains { $0.isLive && $0.streamKinds.contains(.video) }
        let videoConsumer = stages.video.map {
            EncoderThread($0, name: "livemux-encode-video", capacity: liveVideo ? Self.liveVideoQueueFrames : 1)
        }
        for source in sources {
            let v = opened.video.firstIndex { $0 === source }, a = opened.audio.firstIndex { $0 === source }
            let video: FrameConsumer? = v.flatMap { $0 == 0 ? videoConsumer as FrameConsumer? : stages.videoInputs[$0 - 1] }
            let audio: FrameConsumer? = a.flatMap { $0 == 0 ? stages.audio as FrameConsumer? : stages.audioInputs[$0 - 1] }
            source.attach(video: video, audio: audio, timeline: timeline)
        }
        self.opened = opened
        self.stages = stages
        encoderThreads = videoConsumer.map { [$0] } ?? []
        self.timeline = timeline
        self.adaptive = adaptive
        videoBitRate = wantVideo ? config.video.bitRate : 0
        // Weak: the session's server holds this closure, and the pipeline holds the session.
        session.attachDashboard(statistics: { [weak self] in self?.statisticsSnapshot ?? StatisticsSnapshot() }, frames: frames)
    }

    /// Frames a live video device may get ahead of its encoder (a quarter second at 30 fps; at
    /// most 8 MB each, at 1080p).
    static let liveVideoQueueFrames = 8

    /// What the kernel may hold for a TCP output: a quarter second of the configured streams
    /// (Linux doubles it), so a link slower than the stream shows within about half a second.
    static let sendBufferSeconds = 0.25
    static let minimumSendBuffer = 16 * 1024

    static func sendBufferBytes(_ c: RecordConfiguration) -> Int {
        let bits = (c.recordVideo ? c.video.bitRate : 0) + (c.recordAudio ? c.audio.bitRate : 0)
        return max(minimumSendBuffer, Int(Double(bits) / 8 * sendBufferSeconds))
    }

    /// The shared bit rate when the video should follow the primary network output: H.264 only
    /// (FFmpeg 5.1's libx265 wrapper never calls x265_encoder_reconfig), said once for HEVC.
    static func adaptiveBitrate(_ c: RecordConfiguration, report: @Sendable (String) -> Void) -> AdaptiveBitrate? {
        guard c.recordVideo, c.video.adaptiveBitRate, c.outputs.primaryNetworkURL != nil else { return nil }
        guard c.video.codec == .h264 else {
            report("HEVC's bit rate cannot follow the network: FFmpeg 5.1's libx265 cannot change it mid-stream, so a network output that falls behind drops video to the next keyframe instead (--no-adaptive-bitrate: no warning)")
            return nil
        }
        return AdaptiveBitrate(maximum: c.video.bitRate, minimum: c.video.effectiveMinimumBitRate)
    }

    /// Whether files, stdout and viewers get a video encode of their own at `--vbitrate`: there
    /// are some beside a URL output whose bit rate adapts, and `sharedEncode` does not say otherwise.
    static func encodesApart(_ c: RecordConfiguration, adaptive: AdaptiveBitrate?) -> Bool {
        adaptive != nil && !c.video.sharedEncode && c.outputs.hasLocalOutput
    }

    /// Refuses what cannot work, with a message that says what would.
    static func validate(_ c: RecordConfiguration) throws {
        if !c.recordVideo && !c.recordAudio { throw LiveMuxError.invalid("nothing to record: --no-video and --no-audio together") }
        try c.outputs.validate()
    }

    /// Starts the capture threads and the mux thread.
    public func start() {
        guard !started else { return }
        started = true
        sessions.forEach { $0.start() }
        encoderThreads.forEach { $0.start() }
        for (i, source) in sources.enumerated() {
            // One source failing ends the recording gracefully: the others flush too.
            session.spawn("livemux-capture-\(i)", onFailure: stop) { [self] in
                try source.run(stop: stopSignal)
                if let error = source.failure { throw error }
            }
        }
    }

    /// Stops gracefully: sources stop reading, encoders flush, the mux thread drains the queue and
    /// writes the trailers. Safe from any thread, any number of times.
    public func stop() {
        stopSignal.request()
        sources.forEach { $0.interrupt() }
    }

    /// Waits until every thread has finished; throws the first failure.
    public func wait() throws {
        session.waitForProducers()
        try MuxSession.finish(sessions, outputNames: outputNames)
    }

    /// Warnings given before the job was built (the command line's), kept for `--stats` and the
    /// dashboard as the job's own are; the caller has already shown them.
    public func keepWarnings(_ messages: [String]) {
        messages.forEach(statistics.warned)
    }

    /// `livemux serve`: the URLs viewers can open (with the port bound, if 0 was asked for).
    public var viewerURLs: [String] { session.viewerURLs }
    public var dashboardURL: String? { session.dashboardURL }

    public var statisticsSnapshot: StatisticsSnapshot {
        var s = statistics.snapshot
        s.queueDepths = session.queue.depths
        let drift = timeline.drift.status
        (s.driftMs, s.avOffsetMs, s.driftCorrections, s.driftPPM) = (drift.driftMs, drift.offsetMs, drift.corrections, drift.driftPPM)
        s.devices = sources.compactMap { $0.deviceStatus?.snapshot }
        s.sources = stages.snapshots(opened)
        s.network = sessions.flatMap(\.networkSnapshots)
        s.videoBitRate = adaptive?.current ?? videoBitRate
        return s
    }
}
