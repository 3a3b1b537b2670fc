import Foundation
import FFmpeg

/// The live pipeline: capture threads → encoders → mux queue → mux thread → sinks.
///
/// `init` does everything that can fail on bad input — opening the sources, the encoders and the
/// muxers, and creating the output files — so a bad configuration is refused before anything is
/// written. `start` runs the threads; `stop` ends them gracefully (encoders flushed, queues drained,
/// trailers written); `wait` returns when all is done and throws the first failure.
public final class Pipeline: @unchecked Sendable {
    // The fields are set in init and then only read; the threads own their parts.
    private let sources: [CaptureSource]
    private let encoderThreads: [EncoderThread]
    private let queue: MuxQueue
    private let muxThread: MuxThread
    private let timeline: Timeline
    private let stopSignal = StopSignal()
    private let statistics = Statistics()
    private let group = DispatchGroup()
    private let failureLock = NSLock()
    private var sourceFailure: Error?
    private var started = false
    private let server: HTTPServer?
    /// Set for unpaced recordings with H.264 video, when the process may restore a thread's
    /// priority.
    private let idlePriority: IdlePriority?

    /// - Parameter report: receives warnings (an output that stopped while others go on).
    public init(_ config: RecordConfiguration, quiet: Bool = false,
                report: @escaping @Sendable (String) -> Void = { _ in }) throws {
        try Self.validate(config)
        let wantVideo = config.recordVideo, wantAudio = config.recordAudio
        var kinds: [StreamKind] = []
        if wantVideo { kinds.append(.video) }
        if wantAudio { kinds.append(.audio) }

        // Sources first: a missing device is the likeliest mistake.
        var sources: [CaptureSource] = []
        if let input = config.input {
            sources.append(try CaptureSource(spec: input, video: wantVideo, audio: wantAudio, realtime: config.realtime))
        } else {
            if wantVideo {
                let spec = config.videoSource ?? RecordConfiguration.defaultVideoSource(config.video)
                sources.append(try CaptureSource(spec: spec, video: true, audio: false, realtime: config.realtime))
            }
            if wantAudio {
                let spec = config.audioSource ?? RecordConfiguration.defaultAudioSource(config.audio)
                sources.append(try CaptureSource(spec: spec, video: false, audio: true, realtime: config.realtime))
            }
        }

        if sources.contains(where: \.isLive) { sources.forEach { $0.shareClockWithLiveInput() } }
        // Unpaced, nobody waits for a packet: the mux thread is woken once per batch, not per
        // packet, and so takes a core from the video encoder less often.
        let unpaced = !sources.contains { $0.isLive || $0.isPaced }
        let queue = MuxQueue(streams: kinds, capacity: config.queueCapacity,
                             singleProducer: sources.count == 1 && kinds.count > 1, wakeBatch: unpaced ? 16 : 1, startAtZero: true)
        let timeline = Timeline(videoSetsBase: wantVideo, separateThreads: config.input == nil)
        let video = try wantVideo ? VideoEncoder(settings: config.video, timeline: timeline, queue: queue,
                                                 statistics: statistics, duration: config.duration, quiet: quiet) : nil
        let audio = try wantAudio ? AudioEncoder(settings: config.audio, timeline: timeline, queue: queue,
                                                 statistics: statistics, duration: config.duration) : nil
        var streams: [ContainerWriter.StreamDescription] = []
        if let video { streams.append(try video.streamDescription()) }
        if let audio { streams.append(try audio.streamDescription()) }

        // One muxer per container and kind of destination (files get a header updated at the end;
        // pipes get a streamable one).
        var outputs: [MuxThread.Output] = []
        var sinksToOpen: [(Int, Destination)] = []
        for spec in config.outputs {
            let seekable: Bool
            if case .file = spec.destination { seekable = true } else { seekable = false }
            let index: Int
            if let i = outputs.firstIndex(where: { $0.writer.format == spec.format && $0.writer.seekable == seekable }) {
                index = i
            } else {
                // Live (pipe) ASF gets small packets: a payload waits in the open ASF packet until
                // later ones fill it, so 1400 bytes instead of 3200 cut that wait (docs/latency.md).
                outputs.append(.init(writer: try ContainerWriter(format: spec.format, seekable: seekable, streams: streams,
                                                                 asfPacketSize: seekable ? nil : RecordConfiguration.liveASFPacketSize,
                                                                 flvHEVC: config.flvHEVC),
                                     sinks: []))
                index = outputs.count - 1
            }
            sinksToOpen.append((index, spec.destination))
        }
        // Last, create the files: nothing is written unless everything before succeeded.
        let statistics = self.statistics
        let countDropped: @Sendable (Int) -> Void = { statistics.countOutputDropped($0) }
        // Live viewers over HTTP: one hub per container, fed by that container's streaming muxer.
        var routes: [String: StreamHub] = [:]
        if config.listen != nil {
            for format in ContainerFormat.allCases {
                let index: Int
                if let i = outputs.firstIndex(where: { $0.writer.format == format && !$0.writer.seekable }) {
                    index = i
                } else {
                    outputs.append(.init(writer: try ContainerWriter(format: format, seekable: false, streams: streams,
                                                                     flvHEVC: config.flvHEVC), sinks: []))
                    index = outputs.count - 1
                }
                let hub = StreamHub(name: "/live.\(format.rawValue)", contentType: format == .flv ? "video/x-flv" : "video/x-ms-asf",
                                    queueLimit: config.outputQueueCapacity, countDropped: countDropped)
                routes[hub.name] = hub
                outputs[index].sinks.append(hub)
            }
        }
        server = try config.listen.map { try HTTPServer(address: $0, routes: routes) }
        for (index, destination) in sinksToOpen {
            switch destination {
            case .file(let path): outputs[index].sinks.append(try FileSink(path: path))
            case .standardOutput: outputs[index].sinks.append(StandardOutputSink())
            case .network(let url):
                outputs[index].sinks.append(NetworkSink(url: url, policy: config.reconnect, queueLimit: config.outputQueueCapacity,
                                                        report: report, countDropped: countDropped))
            }
        }
        // Unpaced, capture runs at idle priority in the gaps x264's slice threads leave (see
        // IdlePriority), and draws up to 4 frames ahead there instead of 1. x265 leaves no such
        // gaps: idle capture made HEVC 1-2% slower.
        let gaps = video != nil && config.video.codec == .h264
        let idlePriority = unpaced && gaps && IdlePriority.canRestore ? IdlePriority(report: report) : nil
        self.idlePriority = idlePriority
        // Video encodes on a thread of its own, overlapping capture; audio is cheap enough to
        // encode on its capture thread.
        let videoConsumer = video.map { EncoderThread($0, name: "livemux-encode-video", capacity: idlePriority == nil ? 1 : 4) }
        for source in sources {
            let ks = source.streamKinds
            source.attach(video: ks.contains(.video) ? videoConsumer : nil, audio: ks.contains(.audio) ? audio : nil)
        }
        self.sources = sources
        encoderThreads = videoConsumer.map { [$0] } ?? []
        self.queue = queue
        self.timeline = timeline
        muxThread = MuxThread(outputs: outputs, queue: queue, statistics: statistics, report: report)
    }

    /// Refuses what cannot work, with a message that says what would.
    static func validate(_ c: RecordConfiguration) throws {
        if !c.recordVideo && !c.recordAudio { throw LiveMuxError.invalid("nothing to record: --no-video and --no-audio together") }
        if c.outputs.isEmpty && c.listen == nil { throw LiveMuxError.invalid("no output: give -o FILE or -o -") }
        for o in c.outputs {
            guard case .network(let url) = o.destination else { continue }
            // libavformat's protocols print the URLs they open: keep the secrets out of its log.
            FFmpegLogRedaction.redact(secretParts(of: url))
            guard NetworkOutput.canWrite(url: url) else {
                throw LiveMuxError.unsupported("cannot write to \(maskedURL(url)): this FFmpeg has no protocol for it (use rtmp://, srt://, tcp:// or udp://)")
            }
        }
        var files = Set<String>()
        for o in c.outputs {
            guard case .file(let path) = o.destination else { continue }
            let key = URL(fileURLWithPath: path).standardizedFileURL.path
            if !files.insert(key).inserted { throw LiveMuxError.invalid("two outputs write to \(path): give each -o its own file") }
        }
    }

    /// Starts the capture threads and the mux thread.
    public func start() {
        guard !started else { return }
        started = true
        server?.start()
        spawn("livemux-mux") { [muxThread] in muxThread.run() }
        encoderThreads.forEach { $0.start() }
        idlePriority?.start()
        for (i, source) in sources.enumerated() {
            spawn("livemux-capture-\(i)") { [self] in
                do {
                    if let idlePriority {
                        try idlePriority.runLowered { try source.run(stop: stopSignal) }
                    } else {
                        try source.run(stop: stopSignal)
                    }
                    if let error = source.failure { throw error }
                } catch {
                    recordFailure(error)
                    // One source failing ends the recording gracefully: the others flush too.
                    stop()
                }
            }
        }
    }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread { [group] in
            body()
            group.leave()
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    private func recordFailure(_ error: Error) {
        failureLock.lock()
        if sourceFailure == nil { sourceFailure = error }
        failureLock.unlock()
    }

    /// Stops gracefully: sources stop reading, encoders flush, the mux thread drains the queue and
    /// writes the trailers. Safe from any thread, any number of times.
    public func stop() {
        stopSignal.request()
        // Flushing must not wait for a free core.
        idlePriority?.finish()
        for source in sources where source.isLive { source.interrupt() }
    }

    /// Waits until every thread has finished; throws the first failure.
    public func wait() throws {
        group.wait()
        idlePriority?.finish()
        server?.stop()
        failureLock.lock()
        let failure = sourceFailure
        failureLock.unlock()
        if let failure { throw failure }
        if let failure = muxThread.failure { throw failure }
    }

    public var statisticsSnapshot: StatisticsSnapshot {
        var s = statistics.snapshot
        s.queueDepths = queue.depths
        let drift = timeline.drift.status
        (s.driftMs, s.avOffsetMs, s.driftCorrections) = (drift.driftMs, drift.offsetMs, drift.corrections)
        return s
    }
}
