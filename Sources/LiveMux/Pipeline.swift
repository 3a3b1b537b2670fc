import Foundation
import FFmpeg
import POSIX

/// The live pipeline: capture threads → encoders → `MuxSession`s (mux queue, mux thread, outputs).
/// Outputs that ask for the same encode settings share one encode and one session; each distinct
/// setting gets an encode (a lane) of its own, and files, stdout or viewers beside a URL output
/// whose bit rate follows its link get one at the bit rate asked for, so a failing push never
/// degrades the local recording (`EncodePlan`).
///
/// `init` does everything that can fail on bad input — opening the sources, the encoders and the
/// muxers, and creating the output files — so a bad configuration is refused before anything is
/// written. `start` runs the threads; `stop` ends them gracefully (encoders flushed, queues drained,
/// trailers written); `wait` returns when all is done and throws the first failure.
public final class Pipeline: LiveJob, @unchecked Sendable {
    // The fields are set in init and then only read; the threads own their parts.
    /// The sources by kind, v0 and a0 first, for their labels in stats.
    let opened: RecordingSources
    /// Every source, each once.
    var sources: [CaptureSource] { opened.all }
    /// What sits between the sources and the encoders (mix, composition, filters, level meters).
    let stages: SourceStages
    private let encoderThreads: [EncoderThread]
    /// One per distinct pair of encodes the outputs ask for (`EncodePlan`): the first runs the
    /// producers and measures the recording.
    let sessions: [MuxSession]
    private var session: MuxSession { sessions[0] }
    /// Every output in the order given (its key and label), for the last line of their fates.
    private let outputList: [(key: String, label: String)]
    private let timeline: Timeline
    private var stopSignal: StopSignal { session.stopSignal }
    let statistics: Statistics
    private let adaptive: AdaptiveBitrate?
    private let videoBitRate: Int
    private var started = false
    // What the control API reads and changes (Pipeline+JobControl).
    /// Whether the job may be changed while it runs (`RecordConfiguration.liveControl`, `--control-key-file`).
    let controlled: Bool
    /// Each audio source's live volume and mute; nil without the control API.
    let gains: AudioGains?
    let segments: SegmentPlan?
    /// Every output, given or added while the job runs.
    let live: LiveOutputs
    /// The video sources' layout and which is the main picture, as the control API last set them,
    /// and the video sources it removed (left out of the picture).
    let layout: Locked<(layout: VideoLayout, main: Int, removed: Set<Int>)>
    /// Each source's own stop (`stop` requests them all): the control API ends one alone.
    let sourceStops: [StopSignal]
    /// The sources added while the job runs.
    let addedSources: LiveSources

    /// - Parameter report: receives warnings (an output that stopped while others go on).
    public init(_ configuration: RecordConfiguration, quiet: Bool = false,
                report given: @escaping @Sendable (String) -> Void = { _ in }) throws {
        LogLevel.applyChosen()
        try Self.validate(configuration)
        let config = EncodePlan.promotingCommonEncoding(configuration.identifyingOutputs())
        let statistics = Statistics()
        self.statistics = statistics
        // Every warning is also kept, for `--stats` and the dashboard.
        let report: @Sendable (String) -> Void = { message in
            statistics.warned(message)
            given(message)
        }
        let wantVideo = config.recordVideo, wantAudio = config.recordAudio
        let kinds = [wantVideo ? StreamKind.video : nil, wantAudio ? .audio : nil].compactMap { $0 }

        // Sources first: a missing device is the likeliest mistake.
        let opened = try RecordingSources(config, report: report)
        let sources = opened.all
        let controlled = config.liveControl || config.outputs.controlAccess != nil
        let wallClock = sources.contains(where: \.isLive)
        if wallClock { sources.forEach { $0.shareClockWithLiveInput() } }
        // Unpaced, nobody waits for a packet: the mux thread is woken once per batch, not per
        // packet, and so takes a core from the video encoder less often.
        let unpaced = !sources.contains { $0.isLive || $0.isPaced }
        let adaptive = Self.adaptiveBitrate(config, report: report)
        let plan = EncodePlan(video: wantVideo ? config.video : nil, audio: wantAudio ? config.audio : nil,
                              outputs: config.outputs, adaptive: adaptive != nil)
        let outputGroups = Self.sessionOutputs(config, plan)
        let gains = controlled && wantAudio ? AudioGains(count: opened.audio.count, initial: config.composition.gains) : nil
        let queues = outputGroups.map { _ in
            MuxQueue(streams: kinds, capacity: config.queueCapacity, singleProducer: sources.count == 1 && kinds.count > 1,
                     wakeBatch: unpaced ? 16 : 1, startAtZero: true)
        }
        let timeline = Timeline(videoSetsBase: wantVideo, separateThreads: opened.video.first !== opened.audio.first)
        let (videoFormat, audioFormat, graphs) = try Self.formats(config, opened, live: controlled, report: report)
        let (lanes, audioLanes) = try Self.encodes(plan, videoFormat: videoFormat, audioFormat: audioFormat, queues: queues, adaptive: adaptive,
                                                   dialled: controlled, statistics: statistics, quiet: quiet)
        // Frames for the dashboard's snapshot, when there is a dashboard.
        let frames = wantVideo && config.outputs.listen != nil ? FrameTap() : nil
        let video = videoFormat.map { VideoEncoder(format: $0, lanes: lanes, timeline: timeline, statistics: statistics, duration: config.duration,
                                                   segments: config.outputs.segments, frames: frames) }
        let audio = try audioFormat.map {
            try AudioEncoder(settings: config.audio, format: $0, timeline: timeline, lanes: audioLanes, statistics: statistics, duration: config.duration)
        }
        let stages = try SourceStages(opened, graphs: graphs, audioFormat: audioFormat, video: video, audio: audio, gains: gains, live: !unpaced,
                                      report: report)
        // The outputs in the order given, before each session names its own.
        outputList = config.outputs.keyedLabels
        statistics.outputsGiven(outputList)
        sessions = try Self.muxSessions(plan, outputs: outputGroups, queues: queues, lanes: (lanes, audioLanes), adaptive: adaptive,
                                        statistics: statistics, report: report)
        let videoConsumer = Self.attach(opened, to: stages, timeline: timeline)
        self.opened = opened
        self.stages = stages
        self.controlled = controlled
        self.gains = gains
        segments = config.outputs.segments
        layout = Locked((config.composition.layout, 0, []))
        sourceStops = sources.map { _ in StopSignal() }
        live = Self.liveOutputs(config, plan, lanes: (lanes, audioLanes), sessions: sessions, formats: (videoFormat, audioFormat),
                                encoders: (video, audio), statistics: statistics, quiet: quiet, report: report)
        addedSources = Self.liveSources(config, opened, stages: stages, graphs: graphs, gains: gains, audioFormat: audioFormat,
                                        paced: !unpaced, wallClock: wallClock, firstSession: sessions[0], statistics: statistics, report: report)
        encoderThreads = videoConsumer.map { [$0] } ?? []
        self.timeline = timeline
        self.adaptive = adaptive
        videoBitRate = wantVideo ? config.video.bitRate : 0
        // Weak: the session's server holds this closure, and the pipeline holds the session.
        for s in sessions {
            s.attachDashboard(statistics: { [weak self] in self?.statisticsSnapshot ?? StatisticsSnapshot() }, frames: frames)
            s.attachControl(self)
        }
    }

    /// Said when the video graph makes an odd width or height: the encoders take even ones only
    /// (4:2:0), so a column or row is lost, which a user who typed `scale=641:361` should know.
    static func oddSizeWarning(_ size: (width: Int, height: Int), _ c: Composition) -> String? {
        let (width, height) = (size.width & ~1, size.height & ~1)
        guard (width, height) != (size.width, size.height) else { return nil }
        let option = c.videoGraph != nil ? "--filter-complex" : "--vf"
        let lost = [size.width != width ? "a column" : nil, size.height != height ? "a row" : nil].compactMap { $0 }.joined(separator: " and ")
        return "\(option) makes \(size.width)x\(size.height) pictures, and the encoder takes even sizes only: it encodes \(width)x\(height),"
            + " \(lost) less (make the graph's size even, or give --size)"
    }

    /// Frames a live video device may get ahead of its encoder (a quarter second at 30 fps; at
    /// most 8 MB each, at 1080p).
    static let liveVideoQueueFrames = 8

    /// What the kernel may hold for a TCP output: a quarter second of the configured streams
    /// (Linux doubles it), so a link slower than the stream shows within about half a second.
    static let sendBufferSeconds = 0.25
    static let minimumSendBuffer = 16 * 1024

    static func sendBufferBytes(videoBitRate: Int, audioBitRate: Int) -> Int {
        max(minimumSendBuffer, Int(Double(videoBitRate + audioBitRate) / 8 * sendBufferSeconds))
    }

    /// Each session's outputs, as `plan` groups them: the HTTP server goes with the live
    /// viewers' session (or the first, when it serves only the dashboard), and each TCP output's
    /// kernel buffer is sized from its own session's bit rates.
    static func sessionOutputs(_ c: RecordConfiguration, _ plan: EncodePlan) -> [Outputs] {
        plan.sessions.enumerated().map { i, session in
            var o = c.outputs
            o.destinations = session.destinations.map { c.outputs.destinations[$0] }
            o.filesApart = c.liveControl || c.outputs.controlAccess != nil
            if !(session.viewers || (!c.outputs.servesViewers && i == 0)) { o.listen = nil }
            o.sendBufferBytes = sendBufferBytes(videoBitRate: session.video.map { plan.videoEncodes[$0].settings.bitRate } ?? 0,
                                                audioBitRate: session.audio.map { plan.audioEncodes[$0].bitRate } ?? 0)
            return o
        }
    }

    /// The bit rate that follows the primary (first URL) output's link, at that output's settings:
    /// H.264 only (FFmpeg 5.1's libx265 wrapper never calls x265_encoder_reconfig), said once for HEVC.
    static func adaptiveBitrate(_ c: RecordConfiguration, report: @Sendable (String) -> Void) -> AdaptiveBitrate? {
        guard c.recordVideo, c.video.adaptiveBitRate, let primary = EncodePlan.primaryVideo(c.video, outputs: c.outputs) else { return nil }
        guard primary.codec == .h264 else {
            report("HEVC's bit rate cannot follow the network: FFmpeg 5.1's libx265 cannot change it mid-stream, so a network output that falls behind drops video to the next keyframe instead (--no-adaptive-bitrate: no warning)")
            return nil
        }
        return AdaptiveBitrate(maximum: primary.bitRate, minimum: min(primary.effectiveMinimumBitRate, primary.bitRate))
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
                try source.run(stop: sourceStops[i])
                if let error = source.failure { throw error }
            }
        }
    }

    /// Stops gracefully: sources stop reading, encoders flush, the mux thread drains the queue and
    /// writes the trailers. Safe from any thread, any number of times.
    public func stop() {
        stopSignal.request()
        sourceStops.forEach { $0.request() }
        sources.forEach { $0.interrupt() }
        addedSources.stopAll()
    }

    /// Waits until every thread has finished; throws the first failure.
    public func wait() throws {
        session.waitForProducers()
        // A source added while the first wait ran has its thread joined by the second.
        addedSources.stopAll()
        session.waitForProducers()
        live.close()
        try MuxSession.finish(sessions + live.addedSessions, outputs: outputList + live.added.map { ($0.key, $0.label) })
    }

    /// Warnings given before the job was built (the command line's), kept for `--stats` and the
    /// dashboard as the job's own are; the caller has already shown them.
    public func keepWarnings(_ messages: [String]) {
        messages.forEach(statistics.warned)
    }

    /// `livemux serve`: the URLs viewers can open (with the port bound, if 0 was asked for).
    public var viewerURLs: [String] { sessions.flatMap(\.viewerURLs) }
    public var browserURLs: [String] { sessions.flatMap(\.browserURLs) }
    public var dashboardURL: String? { sessions.lazy.compactMap(\.dashboardURL).first }

    public var statisticsSnapshot: StatisticsSnapshot {
        var s = statistics.snapshot
        s.queueDepths = session.queue.depths
        let drift = timeline.drift.status
        (s.driftMs, s.avOffsetMs, s.driftCorrections, s.driftPPM) = (drift.driftMs, drift.offsetMs, drift.corrections, drift.driftPPM)
        let added = addedSources.all
        s.devices = (sources + added.map(\.source)).compactMap { $0.deviceStatus?.snapshot }
        let all = stages.snapshots(opened) + addedSources.snapshots()
        s.sources = all.filter { $0.kind == .video } + all.filter { $0.kind == .audio }
        let volumes = gains?.all ?? []
        for i in s.sources.indices where s.sources[i].kind == .audio {
            if let id = SourceID(s.sources[i].label), volumes.indices.contains(id.index) { s.sources[i].muted = volumes[id.index].muted }
        }
        // Outputs added while the job runs too (issue 52, item 5).
        s.takeNetwork((sessions + live.addedSessions).flatMap(\.networkSnapshots))
        s.videoBitRate = adaptive?.current ?? videoBitRate
        return s
    }
}
