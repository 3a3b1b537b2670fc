import FFmpeg
import POSIX

/// The sources added to a running recording (`POST /api/sources`), after those it started with.
/// Each is opened on the capture clock the job runs on, joins the picture or the mix at the
/// next frame (`VideoCompositor.join`, `AudioMixer.join`), and is read on a thread of its own
/// until the job ends or it is removed. Labels go on from the given sources': v2, a1 …, in the
/// order added, which is also the order of the graph's inputs.
final class LiveSources: Sendable {
    /// One source added: what stats, the API and a removal reach.
    struct Added: Sendable {
        let label: String
        let kind: StreamKind
        let source: CaptureSource
        let stop: StopSignal
        /// Audio: its level, as the mix sees it.
        let meter: LevelMeter?
    }

    /// What a source is opened and joined with.
    struct Context: Sendable {
        /// Opens a source of one kind as the job's own later sources are opened.
        let open: @Sendable (SourceSpec, StreamKind) throws -> CaptureSource
        /// How long an open may take before it is given up (`--device-timeout`), in seconds.
        let openTimeout: Double
        /// Where each kind's sources join; nil where the job has none, or its graph is the user's.
        let compositor: VideoCompositor?
        let mixer: AudioMixer?
        let gains: AudioGains?
        /// The picture's size, for a source that does not say its own.
        let pictureSize: (width: Int, height: Int)?
        let audioFormat: AudioFormat?
        /// The sources each kind started with.
        let given: (video: Int, audio: Int)
        /// Whether the job runs on the capture clock (real time or a live device): an unpaced job
        /// has no "now" for a source to join at.
        let paced: Bool
        /// Whether the job's times are the monotonic clock's (it has a live device); else they
        /// count from `clockOrigin`, the monotonic time of its capture time 0 (nil until known).
        let wallClock: Bool
        let clockOrigin: @Sendable () -> Int64?
        /// Runs a source's thread, joined when the job ends.
        let spawn: @Sendable (String, @escaping @Sendable () -> Void) -> Void
        let statistics: Statistics
        let report: @Sendable (String) -> Void
    }
    private let context: Context

    private struct State {
        var added: [Added] = []
        /// Set when the job stops: no source may join any more.
        var closed = false
        /// The open under way (adds are one at a time), to abandon when the job stops.
        var opening: DeviceOpener<CaptureSource>?
    }
    private let state = Locked(State())
    /// Held through an add, so adds are one at a time.
    private let adding = Locked(())

    /// Sources a job may have of each kind, given and added: each is a thread, a decoder and a
    /// graph input.
    static let maxPerKind = 8

    init(_ context: Context) { self.context = context }

    var all: [Added] { state.withLock { $0.added } }

    func count(_ kind: StreamKind) -> Int {
        (kind == .video ? context.given.video : context.given.audio) + all.filter { $0.kind == kind }.count
    }

    /// Opens `spec` and adds it to the job's `kind` sources: its label. A source that cannot be
    /// opened, or a job it cannot join, is refused with nothing changed.
    func add(_ spec: SourceSpec, kind: StreamKind) throws -> SourceID {
        let field = kind == .video ? "video" : "audio"
        try Self.check(spec, field: field)
        let given = kind == .video ? context.given.video : context.given.audio
        guard given > 0 else {
            throw ControlError.conflict(field, "the job records no \(field): a source of it has nowhere to go (restart without --no-\(field))")
        }
        guard kind == .video ? context.compositor?.canChange == true : context.mixer?.canJoin == true else { throw Self.notJoinable(field) }
        guard context.paced else {
            throw ControlError.conflict(nil, "the job reads its sources as fast as they go (--no-realtime): a source added has no now to join at; restart in real time")
        }
        // One add at a time: labels, graph inputs and gains follow one order. The state's own
        // lock is held only briefly, so stats are not kept waiting while a device opens.
        return try adding.withLock { _ in
            let index = try state.withLock { s in
                guard !s.closed else { throw Self.ending }
                return given + s.added.filter { $0.kind == kind }.count
            }
            guard index < Self.maxPerKind else {
                throw ControlError.conflict(field, "the job has \(Self.maxPerKind) \(field) sources, the most it takes: remove one first")
            }
            let id = SourceID(kind, index), label = id.description
            let source = try open(spec, kind, field: field)
            let meter: LevelMeter?
            switch kind {
            case .video:
                guard let compositor = context.compositor, let picture = context.pictureSize else { throw Self.notJoinable(field) }
                let size = source.format.width > 0 && source.format.height > 0 ? (source.format.width, source.format.height) : picture
                let input = VideoSourceInput(label: label, width: size.0, height: size.1, live: true, device: source.deviceStatus, report: context.report)
                guard compositor.join(input) else { throw Self.ending }
                source.attach(video: input, audio: nil, timeline: nil)
                meter = nil
            case .audio:
                guard let mixer = context.mixer, let format = context.audioFormat, let gains = context.gains else { throw Self.notJoinable(field) }
                let input = try AudioSourceInput(label: label, format: format, live: true)
                // Its gain first: the mix reads it from the frame the source joins at.
                gains.append()
                guard mixer.join(input) else { throw Self.ending }
                source.attach(video: nil, audio: input, timeline: nil)
                meter = input.meter
            }
            let added = Added(label: label, kind: kind, source: source, stop: StopSignal(), meter: meter)
            let report = context.report
            // Spawned under the state's lock: once `stopAll` has run, no thread starts that the
            // job's last wait for its producers would miss.
            try state.withLock { s in
                guard !s.closed else { throw Self.ending }
                s.added.append(added)
                context.spawn("livemux-capture-\(label)") {
                    // A source added ends alone: the recording goes on without it.
                    do {
                        try source.run(stop: added.stop)
                        if let error = source.failure { throw error }
                    } catch {
                        report("\(label) (\(source.name)) stopped: \(ExplainedError.describe(error).message); the recording goes on without it")
                    }
                }
            }
            context.statistics.changed(.sourceAdded(id, name: source.name))
            return id
        }
    }

    private static let ending = ControlError.conflict(nil, "the job is ending")

    /// The graph of `field`'s kind is the user's (`--filter-complex`): nothing can join it.
    private static func notJoinable(_ field: String) -> ControlError {
        ControlError.conflict(field, "the \(field == "video" ? "picture" : "mix") is the --filter-complex graph's: give the source there, at the start")
    }

    /// Opens a source and puts it on the job's clock, or refuses the request naming `field` and
    /// why it did not open.
    private func open(_ spec: SourceSpec, _ kind: StreamKind, field: String) throws -> CaptureSource {
        let source: CaptureSource
        do {
            source = try openWithin(spec, kind, field: field)
        } catch let error as ControlError {
            throw error
        } catch {
            throw ControlError.badRequest(field, "\(spec.maskedDescription) does not open: \(ExplainedError.describe(error).message)")
        }
        if context.wallClock {
            source.joinClock(origin: 0)
        } else if source.isLive {
            // A device stamps on the monotonic clock; this job's times count from its own start.
            throw ControlError.conflict(field, "a device joins a job on the wall clock, one started with a device source; this job's sources are synthetic or files: give the device at the start")
        } else if let origin = context.clockOrigin() {
            source.joinClock(origin: origin)
        } else {
            throw ControlError.conflict(nil, "the job has not started yet: add the source once it has")
        }
        return source
    }

    /// Opens `spec` on a thread of its own and waits until it opened or failed, for at most
    /// `--device-timeout` or until the job stops: libavdevice's pulse waits for a daemon that
    /// accepts and never answers without consulting the interrupt callback. An open given up on
    /// is said once; its thread ends whenever the open does, and what it opened is then closed.
    private func openWithin(_ spec: SourceSpec, _ kind: StreamKind, field: String) throws -> CaptureSource {
        let opener = DeviceOpener.start("livemux-open") { [context] in try context.open(spec, kind) }
        let stopping = state.withLock { s in
            s.opening = opener
            return s.closed
        }
        if stopping { opener.abandon() }
        let outcome = opener.wait(until: Timestamp.monotonicMicroseconds() + Int64(context.openTimeout * 1e6))
        state.withLock { $0.opening = nil }
        guard let outcome else {
            if state.withLock({ $0.closed }) { throw Self.ending }
            let seconds = String(format: "%g", context.openTimeout)
            context.report("\(spec.maskedDescription) did not open in \(seconds) s (--device-timeout): given up, the recording goes on without it")
            throw ControlError(status: "504 Gateway Timeout", field: field,
                               message: "\(spec.maskedDescription) did not open in \(seconds) s (--device-timeout): is its daemon or device answering?")
        }
        return try outcome.get()
    }

    /// Refuses what could keep the server waiting while it opens (a network URL, a pipe, stdin):
    /// a source is opened while the request is answered.
    private static func check(_ spec: SourceSpec, field: String) throws {
        let url = spec.url
        let waits = SourceSpec.isStandardInput(url) || url.hasPrefix("pipe:") || url.contains("://")
            || (spec.format == nil && (try? FileKind(path: url)) == .stream)
        guard !waits else {
            throw ControlError.badRequest(field, "a source added live is a device, a lavfi graph or a file; \(spec.maskedDescription) may keep the job waiting while it opens: give it at the start")
        }
    }

    /// Source `label` if it was added.
    func source(_ label: String) -> Added? { all.first { $0.label == label } }

    /// Every source added, as stats show them.
    func snapshots() -> [SourceSnapshot] {
        all.map { SourceSnapshot(label: $0.label, kind: $0.kind, name: $0.source.name, state: $0.source.state, peakDBFS: $0.meter?.dBFS) }
    }

    /// Stops every source added (any thread), and lets no other join.
    func stopAll() {
        let (added, opening) = state.withLock { s in
            s.closed = true
            return (s.added, s.opening)
        }
        opening?.abandon()  // an open waited for is given up
        for a in added {
            a.stop.request()
            a.source.interrupt()
        }
    }
}
