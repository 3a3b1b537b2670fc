import Foundation
import FFmpeg
import POSIX

/// The half of every pipeline after the encoders, shared by `record`, `mux` and `Muxer`: the mux
/// queue, the mux thread, the output graph — one container writer per container and kind of
/// destination (a file's muxer seeks back to finish its header, a stream's does not), each with
/// its sinks: files, stdout, URLs with reconnect and drop policy, HTTP viewers — and the threads
/// that feed it, with the first failure.
///
/// `init` creates the writers when the streams are known, then the HTTP server, then the sinks
/// (files last), so nothing is created unless everything before succeeded. `start` runs the mux
/// thread and the server. Producers push to `queue` (from threads `spawn` started, or their own)
/// and end their streams; `finish` waits for the mux thread and throws the first failure.
final class MuxSession: @unchecked Sendable {
    /// ASF packet size for live streams: small, so payloads wait less for their packet to fill.
    static let liveASFPacketSize = 1400

    let queue: MuxQueue
    let statistics: Statistics
    /// Wakes producers' pacing sleeps; `stop()` requests it.
    let stopSignal = StopSignal()
    private let report: @Sendable (String) -> Void
    private let recycle: PacketPool?
    /// ASF packet size for streams (pipes, URLs, viewers), where a payload waits in the open ASF
    /// packet until later ones fill it; nil: the muxer's 3200 bytes.
    private let streamingASFPacketSize: Int?
    private let flvHEVC: FLVHEVCMode
    private let segments: SegmentPlan?
    /// An output added while the job runs: its timestamps start at its first packet, a keyframe.
    private let startsAtFirstPacket: Bool
    /// 0; 1 for a second session (URL outputs with an encode of their own; see `MuxThread`).
    private let index: Int
    private let server: HTTPServer?
    /// The producers `spawn` started, to join, and the first error one threw.
    private let producers = Locked<(threads: [WorkerThread], failure: Error?)>(([], nil))
    /// The mux thread, joined by `finish`.
    private var muxWorker: WorkerThread?
    // Set in init and start (before any thread runs), then read only.
    private(set) var routes: [MuxRoute]
    private var networkSinks: [NetworkSink] = []  // set in init, then read only
    /// The live viewers' hubs, one per container, when the session serves (`listen`).
    private let hubs: [StreamHub]
    /// The outputs in the order the user gave them (then the caller's sinks), each by its key in
    /// the statistics and its label, for the final line of their fates; viewers are not outputs
    /// that fail.
    private let outputList: [(key: String, label: String)]
    private var muxThread: MuxThread?

    /// The outputs must have been validated (`Outputs.validate`).
    ///
    /// - Parameters:
    ///   - streams: the streams' parameters, when they are known now (else `start(streams:)`).
    ///   - extraRoute: sinks of the caller's own for one container (the `Muxer`'s sinks).
    ///   - streamingASFPacketSize: see the property.
    init(queue: MuxQueue, outputs: Outputs, streams: [ContainerWriter.StreamDescription]?,
         extraRoute: (format: ContainerFormat, seekable: Bool, sinks: [ChunkSink])? = nil,
         streamingASFPacketSize: Int? = nil, statistics: Statistics = Statistics(), index: Int = 0,
         recycle: PacketPool? = nil, adaptive: AdaptiveBitrate? = nil, startsAtFirstPacket: Bool = false,
         report: @escaping @Sendable (String) -> Void) throws {
        self.queue = queue
        self.startsAtFirstPacket = startsAtFirstPacket
        self.index = index
        self.statistics = statistics
        self.recycle = recycle
        self.report = report
        self.streamingASFPacketSize = streamingASFPacketSize
        let graph = OutputGraph(outputs, callerSinks: extraRoute.map { ($0.format, $0.seekable) })
        var routes = graph.writers.map(MuxRoute.init)
        // Live viewers: one hub per container, fed by its streaming muxer.
        let countDropped: @Sendable (Int) -> Void = { statistics.countOutputDropped($0) }
        var hubs: [StreamHub] = []
        var playlist: HLSPlaylist?
        for (i, writer) in graph.writers.enumerated() {
            if writer.callerSinks, let extra = extraRoute { routes[i].sinks += extra.sinks }
            guard writer.viewers else { continue }
            let format = writer.format
            let hub = StreamHub(name: "/live.\(format.rawValue)", contentType: format == .flv ? "video/x-flv" : "video/x-ms-asf",
                                queueLimit: outputs.queueCapacity, countDropped: countDropped)
            hubs.append(hub)
            routes[i].sinks.append(hub)
        }
        // Browsers: fragmented MP4 from the same packets, served beside the containers' streams,
        // and with --http (no viewers' streams) for the dashboard's live picture.
        if outputs.listen != nil {
            let hub = StreamHub(name: BrowserStream.path, contentType: "video/mp4", queueLimit: outputs.queueCapacity, countDropped: countDropped)
            hubs.append(hub)
            let hls = HLSPlaylist()
            routes.append(MuxRoute(browserSinks: [hub, hls]))
            playlist = hls
        }
        self.hubs = hubs
        flvHEVC = outputs.flvHEVC
        segments = outputs.segments
        if let streams {
            try Self.makeWriters(&routes, streams, hubs: hubs, streamingASFPacketSize: streamingASFPacketSize, flvHEVC: flvHEVC, segments: segments,
                                 startsAtFirstPacket: startsAtFirstPacket)
        }
        self.routes = routes
        let ids = outputs.identified().destinations.map { $0.id! }
        outputList = outputs.keyedLabels + (extraRoute?.sinks.map { ($0.name, $0.name) } ?? [])
        statistics.outputsGiven(outputList)
        server = try outputs.listen.map { address in
            try HTTPServer(address: address, option: outputs.addressOption, routes: Dictionary(uniqueKeysWithValues: hubs.map { ($0.name, $0) }),
                           hls: playlist, maxViewers: outputs.maxViewers, access: outputs.viewerAccess,
                           dashboard: Dashboard(statistics: { statistics.snapshot }), control: outputs.controlAccess.map { ControlAPI(access: $0) })
        }
        if let warning = server?.warning { report(warning) }
        // Last, create the files: nothing is written unless everything before succeeded.
        var networkSinks: [(destination: Int, sink: NetworkSink)] = []
        let primaryURL = outputs.destinations.firstIndex { $0.destination.isNetwork }
        for (i, writer) in graph.writers.enumerated() {
            for d in writer.destinations {
                // The first URL output given is the primary: the video bit rate follows its link.
                let sink = try Self.makeSink(outputs, d, id: ids[d], writer: writer, adaptive: d == primaryURL ? adaptive : nil,
                                             statistics: statistics, report: report, countDropped: countDropped)
                self.routes[i].add(sink, id: ids[d])
                if let segmented = sink as? SegmentFileSink { self.routes[i].segmentSink = segmented }
                if let network = sink as? NetworkSink { networkSinks.append((d, network)) }
            }
        }
        self.networkSinks = networkSinks.sorted { $0.destination < $1.destination }.map(\.sink)  // as given
    }

    /// The sink of destination `d`, created (a file is created or truncated here).
    private static func makeSink(_ outputs: Outputs, _ d: Int, id: OutputID, writer: OutputGraph.Writer, adaptive: AdaptiveBitrate?,
                                 statistics: Statistics, report: @escaping @Sendable (String) -> Void,
                                 countDropped: @escaping @Sendable (Int) -> Void) throws -> ChunkSink {
        switch outputs.destinations[d].destination {
        case .file(let path) where writer.segmented:
            let plan = outputs.segments!
            let events = SegmentFileSink.Events(closed: { record in
                statistics.segmentClosed(record)
                plan.onClosed?(record)
            }, deletedEarly: { plan.onDeletedEarly?($0) }, warn: report)
            return try SegmentFileSink(pattern: path, overwrite: outputs.overwriteFiles, policy: plan.policy, events: events)
        case .file(let path):
            // A pipe or FIFO by name is live like stdout: each batch goes out at its end.
            let buffer = writer.seekable ? FileSink.defaultBufferLimit : 0
            return try FileSink(path: path, overwrite: outputs.overwriteFiles, bufferLimit: buffer)
        case .standardOutput:
            return StandardOutputSink()
        case .network(let url):
            let tuning = NetworkSink.Tuning(maxLatency: outputs.maxLatency, sendBufferBytes: outputs.sendBufferBytes, adaptive: adaptive)
            return NetworkSink(url: url, id: id, policy: outputs.reconnect, queueLimit: outputs.queueCapacity, tuning: tuning,
                               tls: outputs.tls, report: report, countDropped: countDropped)
        }
    }

    /// Each URL output's backlog and link, in the order given.
    var networkSnapshots: [NetworkOutputSnapshot] { networkSinks.map(\.snapshot) }

    private static func makeWriters(_ routes: inout [MuxRoute], _ streams: [ContainerWriter.StreamDescription], hubs: [StreamHub],
                                    streamingASFPacketSize: Int?, flvHEVC: FLVHEVCMode, segments: SegmentPlan?,
                                    startsAtFirstPacket: Bool = false) throws {
        if let b = routes.firstIndex(where: { $0.format == nil && $0.writer == nil }), !streams.allSatisfy(BrowserStream.canCarry) {
            // No browser stream for these codecs: /live.mp4 then answers that the stream ended.
            for case let hub as StreamHub in routes[b].sinks { try? hub.close() }
            routes.remove(at: b)
        }
        for i in routes.indices where routes[i].writer == nil {
            let r = routes[i]
            guard let format = r.format else {
                routes[i].writer = try ContainerWriter(browserStreams: streams)
                for case let hub as StreamHub in r.sinks { hub.contentType = BrowserStream.contentType(streams) }
                for case let hls as HLSPlaylist in r.sinks { hls.hasVideo = streams.contains { $0.kind == .video } }
                continue
            }
            guard r.segmented, let plan = segments else {
                routes[i].writer = try ContainerWriter(format: format, seekable: r.seekable, streams: streams,
                                                       asfPacketSize: r.seekable ? nil : streamingASFPacketSize, flvHEVC: flvHEVC,
                                                       startsAtFirstPacket: startsAtFirstPacket)
                continue
            }
            let segmenter = Segmenter(plan: plan, hasVideo: streams.contains { $0.kind == .video }) { origin in
                try ContainerWriter(format: format, seekable: true, streams: try streams.map { try $0.now() }, flvHEVC: flvHEVC,
                                    origin: origin.map { ($0.dts, $0.timeBase) })
            }
            routes[i].writer = try segmenter.firstWriter()
            routes[i].segmenter = segmenter
        }
        for hub in hubs { hub.streamCodecs = streams.map(StreamCodec.init) }
    }

    /// Starts the mux thread and the HTTP server; the writers must exist (`init` had the streams).
    func start() {
        guard muxThread == nil else { return }
        precondition(routes.allSatisfy { $0.writer != nil }, "every route has its writer before its mux thread starts")
        for r in routes { r.segmenter?.sink = r.segmentSink }
        let thread = MuxThread(routes: routes, queue: queue,
                               statistics: statistics, session: index, recycle: recycle,
                               outputs: outputList, report: report)
        muxThread = thread
        networkSinks.forEach { $0.start() }
        muxWorker = WorkerThread.spawn("livemux-mux") { thread.run() }
        server?.start()
    }

    /// Makes the writers for streams that became known after `init`, then starts.
    func start(streams: [ContainerWriter.StreamDescription]) throws {
        try Self.makeWriters(&routes, streams, hubs: hubs, streamingASFPacketSize: streamingASFPacketSize, flvHEVC: flvHEVC, segments: segments)
        start()
    }

    var isStarted: Bool { muxThread != nil }

    /// `livemux serve`: the URLs viewers can open (with the port bound, if 0 was asked for).
    var viewerURLs: [String] { server?.viewerURLs ?? [] }
    var browserURLs: [String] { server?.browserURLs ?? [] }

    /// The dashboard's page, when the session serves (`--listen`, `--http`).
    var dashboardURL: String? { server?.dashboardURL }

    /// Gives the dashboard the whole recording's statistics and its video frames (before `start`).
    func attachDashboard(statistics: @escaping @Sendable () -> StatisticsSnapshot, frames: FrameTap?) {
        server?.dashboard.attach(statistics: statistics, frames: frames)
    }

    /// Why output `id` cannot end alone while the others go on, else nil: files of one
    /// container share one muxer, whose trailer seeks back into each of them.
    func removalProblem(_ id: OutputID) -> String? {
        guard let route = routes.first(where: { $0.sink(keyed: id.description) != nil }) else { return "it is not an output of this job" }
        let others = route.sinks.filter { route.key(of: $0) != id.description }.map(\.name)
        guard route.seekable, !others.isEmpty else { return nil }
        return "it shares its muxer with \(others.joined(separator: ", ")), whose trailer completes both files"
    }

    /// Asks URL output `id` for a new connection; nil when it is not one of this session's URL
    /// outputs, false when it is not connected now.
    func reconnect(_ id: OutputID) -> Bool? { networkSinks.first { $0.id == id }.map { $0.reconnect() } }

    /// Ends output `id` from the mux thread's next batch: its trailer, then its sink closed.
    func removeOutput(_ id: OutputID) { muxThread?.remove(output: id.description) }

    /// Lets the control API, when the session serves it, change `job`.
    func attachControl(_ job: any JobControl) { server?.controlAPI?.attach(job) }

    /// The mux thread's first failure, so far (a producer reads it once the queue refused it).
    var muxFailure: Error? { muxThread?.failure }

    /// Runs a producer on a thread of its own. The first error a producer throws is the session's
    /// failure; `onFailure` then runs (to stop the other producers gracefully).
    func spawn(_ name: String, onFailure: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () throws -> Void) {
        let thread = WorkerThread.spawn(name) { [self] in
            do {
                try body()
            } catch {
                producers.withLock { if $0.failure == nil { $0.failure = error } }
                onFailure()
            }
        }
        producers.withLock { $0.threads.append(thread) }
    }

    /// Waits for every producer `spawn` started.
    func waitForProducers() {
        let started = producers.withLock { p in
            defer { p.threads = [] }
            return p.threads
        }
        started.forEach { $0.join() }
    }

    /// Waits until the mux thread has written every trailer (the producers must have ended their
    /// streams, or `cancel` been called), stops the server, and throws the first failure: a
    /// producer's, else the mux thread's, else every output's fate when some stopped early.
    func finish() throws { try Self.finish([self]) }

    /// `finish` for sessions that share producers (a recording whose URL outputs have an encode
    /// of their own): a producer's failure, else a muxer's, else — when every output of every
    /// session stopped — the first session's reason; when only some stopped, one line with every
    /// output's fate (`outputs`: keys and labels in the order the user gave them; default: by session).
    static func finish(_ sessions: [MuxSession], outputs: [(key: String, label: String)]? = nil) throws {
        for session in sessions {
            session.muxWorker?.join()
            if session.isStarted { session.server?.stop() }
        }
        for session in sessions {
            if let failure = session.producers.withLock({ $0.failure }) { throw failure }
        }
        let threads = sessions.compactMap(\.muxThread)
        if let muxerFailure = threads.first(where: { $0.failure != nil && !$0.lostEveryOutput })?.failure { throw muxerFailure }
        if !threads.isEmpty, threads.allSatisfy(\.lostEveryOutput), let failure = threads[0].failure { throw failure }
        let stopped = threads.reduce(into: [String: String]()) { $0.merge($1.stoppedOutputs) { first, _ in first } }
        guard !stopped.isEmpty else { return }
        let all = outputs ?? threads.flatMap(\.outputs)
        let fates = all.map { o in stopped[o.key].map { "\(o.label) stopped: \($0)" } ?? "\(o.label) complete" }
        throw LiveMuxError.output("\(stopped.count) of \(all.count) outputs failed: \(fates.joined(separator: "; "))")
    }
}
