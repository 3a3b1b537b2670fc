import Foundation
import FFmpeg

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
    /// One writer's place in the graph: its container, whether its sinks seek, and the sinks.
    struct Route {
        let format: ContainerFormat
        let seekable: Bool
        var sinks: [ChunkSink] = []
        var writer: ContainerWriter?
    }

    /// Stack size of every thread the session starts (Foundation's default of 512 KiB is too
    /// small for libx264's and libavformat's frames).
    static let threadStackSize = 4 << 20

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
    /// False for a second session (URL outputs with an encode of their own; see `MuxThread`).
    private let primary: Bool
    private let server: HTTPServer?
    private let producers = DispatchGroup()
    private let muxDone = DispatchGroup()
    // Set in init and start (before any thread runs), then read only.
    private(set) var routes: [Route]
    private var networkSinks: [NetworkSink] = []  // set in init, then read only
    /// The outputs in the order the user gave them, for the final line of their fates.
    private let outputNames: [String]
    private var muxThread: MuxThread?
    private let lock = NSLock()
    private var producerFailure: Error?  // guarded by `lock`

    /// The outputs must have been validated (`Outputs.validate`).
    ///
    /// - Parameters:
    ///   - streams: the streams' parameters, when they are known now (else `start(streams:)`).
    ///   - extraRoute: sinks of the caller's own for one container (the `Muxer`'s sinks).
    ///   - streamingASFPacketSize: see the property.
    init(queue: MuxQueue, outputs: Outputs, streams: [ContainerWriter.StreamDescription]?,
         extraRoute: (format: ContainerFormat, seekable: Bool, sinks: [ChunkSink])? = nil,
         streamingASFPacketSize: Int? = nil, statistics: Statistics = Statistics(), primary: Bool = true,
         recycle: PacketPool? = nil, adaptive: AdaptiveBitrate? = nil, report: @escaping @Sendable (String) -> Void) throws {
        self.queue = queue
        self.primary = primary
        self.statistics = statistics
        self.recycle = recycle
        self.report = report
        self.streamingASFPacketSize = streamingASFPacketSize
        var routes: [Route] = []
        func route(_ format: ContainerFormat, seekable: Bool) -> Int {
            if let i = routes.firstIndex(where: { $0.format == format && $0.seekable == seekable }) { return i }
            routes.append(Route(format: format, seekable: seekable))
            return routes.count - 1
        }
        if let extra = extraRoute { routes[route(extra.format, seekable: extra.seekable)].sinks += extra.sinks }
        let placed = outputs.destinations.map { spec -> (Int, Destination) in
            if case .file = spec.destination { return (route(spec.format, seekable: true), spec.destination) }
            return (route(spec.format, seekable: false), spec.destination)
        }
        // Live viewers: one hub per container, fed by its streaming muxer.
        var hubs: [String: StreamHub] = [:]
        let countDropped: @Sendable (Int) -> Void = { statistics.countOutputDropped($0) }
        if outputs.listen != nil {
            for format in ContainerFormat.allCases {
                let hub = StreamHub(name: "/live.\(format.rawValue)", contentType: format == .flv ? "video/x-flv" : "video/x-ms-asf",
                                    queueLimit: outputs.queueCapacity, countDropped: countDropped)
                hubs[hub.name] = hub
                routes[route(format, seekable: false)].sinks.append(hub)
            }
        }
        flvHEVC = outputs.flvHEVC
        if let streams { try Self.makeWriters(&routes, streams, streamingASFPacketSize: streamingASFPacketSize, flvHEVC: flvHEVC) }
        self.routes = routes
        outputNames = outputs.destinations.map(\.destination.description)
        server = try outputs.listen.map { try HTTPServer(address: $0, routes: hubs, maxViewers: outputs.maxViewers) }
        if let warning = server?.warning { report(warning) }
        // Last, create the files: nothing is written unless everything before succeeded.
        var networkSinks: [NetworkSink] = []
        for (i, destination) in placed {
            switch destination {
            case .file(let path): self.routes[i].sinks.append(try FileSink(path: path, overwrite: outputs.overwriteFiles))
            case .standardOutput: self.routes[i].sinks.append(StandardOutputSink())
            case .network(let url):
                // The first URL output is the primary: the video bit rate follows its link.
                let tuning = NetworkSink.Tuning(maxLatency: outputs.maxLatency, sendBufferBytes: outputs.sendBufferBytes,
                                                adaptive: networkSinks.isEmpty ? adaptive : nil)
                let sink = NetworkSink(url: url, policy: outputs.reconnect, queueLimit: outputs.queueCapacity, tuning: tuning,
                                       report: report, countDropped: countDropped)
                networkSinks.append(sink)
                self.routes[i].sinks.append(sink)
            }
        }
        self.networkSinks = networkSinks
    }

    /// Each URL output's backlog and link, in the order given.
    var networkSnapshots: [NetworkOutputSnapshot] { networkSinks.map(\.snapshot) }

    private static func makeWriters(_ routes: inout [Route], _ streams: [ContainerWriter.StreamDescription],
                                    streamingASFPacketSize: Int?, flvHEVC: FLVHEVCMode) throws {
        for i in routes.indices where routes[i].writer == nil {
            let r = routes[i]
            routes[i].writer = try ContainerWriter(format: r.format, seekable: r.seekable, streams: streams,
                                                   asfPacketSize: r.seekable ? nil : streamingASFPacketSize, flvHEVC: flvHEVC)
            for case let hub as StreamHub in r.sinks { hub.streamCodecs = streams.map(StreamCodec.init) }
        }
    }

    /// Starts the mux thread and the HTTP server; the writers must exist (`init` had the streams).
    func start() {
        guard muxThread == nil else { return }
        let thread = MuxThread(outputs: routes.map { .init(writer: $0.writer!, sinks: $0.sinks) }, queue: queue,
                               statistics: statistics, primary: primary, recycle: recycle,
                               outputNames: outputNames.isEmpty ? nil : outputNames, report: report)
        muxThread = thread
        networkSinks.forEach { $0.start() }
        Self.spawn("livemux-mux", in: muxDone) { thread.run() }
        server?.start()
    }

    /// Makes the writers for streams that became known after `init`, then starts.
    func start(streams: [ContainerWriter.StreamDescription]) throws {
        try Self.makeWriters(&routes, streams, streamingASFPacketSize: streamingASFPacketSize, flvHEVC: flvHEVC)
        start()
    }

    var isStarted: Bool { muxThread != nil }

    /// `livemux serve`: the URLs viewers can open (with the port bound, if 0 was asked for).
    var viewerURLs: [String] { server?.viewerURLs ?? [] }

    /// The mux thread's first failure. Read it after the queue refused a packet (the queue's lock
    /// orders the mux thread's write before it) or after `finish`.
    var muxFailure: Error? { muxThread?.failure }

    /// Runs a producer on a thread of its own. The first error a producer throws is the session's
    /// failure; `onFailure` then runs (to stop the other producers gracefully).
    func spawn(_ name: String, onFailure: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () throws -> Void) {
        Self.spawn(name, in: producers) { [self] in
            do {
                try body()
            } catch {
                lock.lock()
                if producerFailure == nil { producerFailure = error }
                lock.unlock()
                onFailure()
            }
        }
    }

    private static func spawn(_ name: String, in group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = name
        thread.stackSize = threadStackSize
        thread.start()
    }

    /// Waits for every producer `spawn` started.
    func waitForProducers() { producers.wait() }

    /// Waits until the mux thread has written every trailer (the producers must have ended their
    /// streams, or `cancel` been called), stops the server, and throws the first failure: a
    /// producer's, else the mux thread's, else every output's fate when some stopped early.
    func finish() throws { try Self.finish([self]) }

    /// `finish` for sessions that share producers (a recording whose URL outputs have an encode
    /// of their own): a producer's failure, else a muxer's, else — when every output of every
    /// session stopped — the first session's reason; when only some stopped, one line with every
    /// output's fate (`outputNames`: in the order the user gave them; default: by session).
    static func finish(_ sessions: [MuxSession], outputNames: [String]? = nil) throws {
        for session in sessions {
            session.muxDone.wait()
            if session.isStarted { session.server?.stop() }
        }
        for session in sessions {
            session.lock.lock()
            let failure = session.producerFailure
            session.lock.unlock()
            if let failure { throw failure }
        }
        let threads = sessions.compactMap(\.muxThread)
        if let muxerFailure = threads.first(where: { $0.failure != nil && !$0.lostEveryOutput })?.failure { throw muxerFailure }
        if !threads.isEmpty, threads.allSatisfy(\.lostEveryOutput), let failure = threads[0].failure { throw failure }
        let stopped = threads.reduce(into: [String: String]()) { $0.merge($1.stoppedOutputs) { first, _ in first } }
        guard !stopped.isEmpty else { return }
        let names = outputNames ?? threads.flatMap(\.outputNames)
        let fates = names.map { name in stopped[name].map { "\(name) stopped: \($0)" } ?? "\(name) complete" }
        throw LiveMuxError.output("\(stopped.count) of \(names.count) outputs failed: \(fates.joined(separator: "; "))")
    }
}
