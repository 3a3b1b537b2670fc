import FFmpeg
import POSIX

/// One opened input and the thread that reads it: demux and decode (or read a lavfi graph), put
/// every frame on the capture clock (`CaptureClock`), pace it, and hand it to the encoder of its
/// stream. A live device is read through a `DeviceReader` and kept going by its `DeviceSupervisor`.
final class CaptureSource: @unchecked Sendable {
    // Used by its capture thread only, except `interrupt()`.
    let spec: SourceSpec
    /// What `interrupt()` reaches from another thread.
    private struct Reading {
        /// Replaced only when a live device that failed is opened again (by the capture thread).
        var input: CaptureInput
        /// A live device's reads, or those of an input whose reads may block, on a thread of their
        /// own (`DeviceReader`), kept here for `interrupt()` (the capture thread holds its own reference).
        var reader: DeviceReader?
    }
    private let reading: Locked<Reading>
    private var routes: [Int: CaptureInput.Route]
    /// What the wanted streams say they deliver (size, rates, channels).
    let format: SourceFormat
    private var video: FrameConsumer?
    private var audio: FrameConsumer?
    private var clock: CaptureClock
    /// The timeline that waits for this input's first frame (`Timeline.expectInput`): set when it
    /// shares the capture clock with a live input.
    private var timeline: Timeline?
    private var hasStarted = false
    /// A live device's first audio frames, held until their start is settled.
    private var audioStart = AudioStartSettling()
    /// A live device's failures, fills and reopenings; nil for everything else.
    private let supervisor: DeviceSupervisor?
    /// What `--stats` shows about this input, when it is a live device.
    var deviceStatus: DeviceStatus? { supervisor?.status }
    /// Set when `run` returns.
    private let ended = Locked(false)

    /// The source as messages and stats name it: credentials in its URL masked.
    var name: String { spec.maskedDescription }

    /// "ended" once it has, else its device's state, else "live".
    var state: SourceState { ended.withLock { $0 } ? .ended : supervisor?.status.snapshot.state ?? .live }

    /// Waits until `run` has returned, at most `seconds`; whether it has.
    func waitUntilEnded(seconds: Double) -> Bool {
        ended.withLock(waitingUntil: { $0 }, deadline: Timestamp.monotonicMicroseconds() + Int64(seconds * 1e6)) { done, _ in done }
    }

    /// Opens the input and the decoders for the wanted streams; throws if one is missing.
    /// `frameRate`: the recording's frame rate (`--fps`), which a screen grab is asked for.
    /// `reopening`, `report`: what a live device that fails gets, and where its warning goes.
    init(spec: SourceSpec, video wantVideo: Bool, audio wantAudio: Bool, realtime: Bool, frameRate: FrameRate?,
         reopening: DeviceReopening = DeviceReopening(), report: @escaping @Sendable (String) -> Void = { _ in }) throws {
        self.spec = spec
        let openOptions = DeviceDefaults.options(for: spec, frameRate: frameRate).sorted { $0.key < $1.key }
        let input = try CaptureInput.open(spec, options: openOptions)
        reading = Locked(Reading(input: input))
        let kinds = [(wantVideo, StreamKind.video), (wantAudio, StreamKind.audio)].filter(\.0).map(\.1)
        routes = try input.routes(kinds, spec)
        format = input.format(routes)
        isLive = input.isLive
        supervisor = isLive ? DeviceSupervisor(spec: spec, format: format, options: openOptions, policy: reopening, report: report) : nil
        var grid: FrameGrid? = nil
        if isLive, case .demuxer(let device) = input { grid = CaptureInput.grid(device, routes) }
        clock = CaptureClock(isLive: isLive, realtime: realtime, frameGrid: grid, deviceStatus: supervisor?.status)
    }

    /// A camera, screen or microphone: it runs at its own pace, on the wall clock.
    let isLive: Bool

    /// Whether frames are delivered on the capture clock (real time asked for, or another input
    /// is live).
    var isPaced: Bool { clock.paced }

    /// Puts this input on the wall clock because another input is live.
    func shareClockWithLiveInput() { clock.shareWithLiveInput() }

    /// Puts this input, not live and not yet run, on a running job's clock (`clockOrigin` of the
    /// source that times it).
    func joinClock(origin: Int64) { clock.join(origin: origin) }

    /// The monotonic time this input's capture time 0 stands for, once its first frame was paced
    /// (any thread); nil before, and for a live device.
    var clockOrigin: Int64? { publishedOrigin.withLock { $0 } }
    private let publishedOrigin = Locked<Int64?>(nil)
    private var originPublished = false

    var streamKinds: [StreamKind] { routes.values.map(\.kind).sorted() }

    /// `timeline`: the one whose zero waits for this input's first frame; nil for a source added
    /// to a running job, which zero never waits for.
    func attach(video: FrameConsumer?, audio: FrameConsumer?, timeline: Timeline?) {
        self.video = video
        self.audio = audio
        supervisor?.attach(video: video, audio: audio)
        if let timeline, isLive || clock.anchorToArrival {
            self.timeline = timeline
            timeline.expectInput()
        }
    }

    /// Tells the timeline this input has started: its first frame was captured at `time`, or it
    /// ended or failed before one (then `time` is now).
    private func started(at time: Int64) {
        guard !hasStarted else { return }
        hasStarted = true
        timeline?.inputStarted(at: time)
    }

    /// Makes a blocked read return (any thread). A filter graph never blocks.
    func interrupt() {
        reading.withLock { r in
            if case .demuxer(let device) = r.input { device.interrupt() }
            r.reader?.wake()
        }
    }

    /// Reads until the input ends, every encoder is done, or a stop is requested; then flushes the
    /// decoders and encoders and ends their streams. The streams end even when it throws.
    func run(stop: StopSignal) throws {
        defer {
            ended.withLock { $0 = true }
            ended.broadcast()
        }
        defer { finishEncoders() }
        defer { started(at: Timestamp.monotonicMicroseconds()) }
        let frame = try Frame()
        switch reading.withLock({ $0.input }) {
        case .filterGraph(let graph):
            while !stop.isRequested, let index = try graph.read(into: frame) {
                guard let route = routes[index] else { continue }
                if try !deliver(frame, route, stop) { break }
            }
        case .demuxer(let device):
            var reader = isLive || spec.readsMayBlock ? setReader(DeviceReader.start(device)) : nil
            defer { setReader(nil) }
            let own = try Packet()
            reading: while !stop.isRequested {
                let packet: Packet
                if let live = reader, let supervisor {
                    // A live device that fails, ends or stalls is ridden out (filled, reopened):
                    // the recording goes on.
                    let next = supervisor.next(from: live)
                    if stop.isRequested { break reading }
                    if let problem = next.problem {
                        guard let back = try rejoin(after: problem, since: next.since, stop: stop) else { break reading }
                        reader = setReader(DeviceReader.start(back))
                        continue
                    }
                    guard let read = next.packet else { continue }
                    packet = read
                } else if let reader {
                    guard let read = try reader.nextPacket(stopping: { stop.isRequested }) else { break reading }
                    packet = read
                } else {
                    guard try device.read(into: own) else { break reading }
                    packet = own
                }
                defer { reader?.recycle(packet) }
                guard let route = routes[packet.streamIndex], let decoder = route.decoder else { continue }
                try decoder.send(packet)
                if try !deliverDecoded(route, decoder, frame, stop) { break reading }
            }
            // Drain what the decoders still hold (only when the input ended by itself or the
            // duration was reached: a stop delivers nothing more).
            if !stop.isRequested {
                for route in routes.values {
                    guard let decoder = route.decoder else { continue }
                    try decoder.send(nil)
                    _ = try deliverDecoded(route, decoder, frame, stop)
                }
            }
            _ = try releaseHeldAudio()
        }
    }

    /// Replaces the live device's reader (where `interrupt()` finds it) and returns it; the one
    /// before is given up (see `DeviceReader`).
    @discardableResult
    private func setReader(_ new: DeviceReader?) -> DeviceReader? {
        let old = reading.withLock { r in
            defer { r.reader = new }
            return r.reader
        }
        old?.abandon()
        return new
    }

    /// The device failed (`since`: when it last delivered): its supervisor fills its streams and
    /// opens it again; the device once it is back, nil when the recording stopped or is complete
    /// meanwhile. Throws at the timeout.
    private func rejoin(after problem: String, since: Int64, stop: StopSignal) throws -> InputDevice? {
        guard let supervisor else { return nil }
        setReader(nil)
        started(at: Timestamp.monotonicMicroseconds())
        // What the device delivered goes on before the gap is filled after it.
        guard try releaseHeldAudio() else { return nil }
        guard let (device, failed) = try supervisor.rideOut(problem, since: since, stop: stop) else { return nil }
        routes = try CaptureInput.routes(device, streamKinds, spec)
        reading.withLock { $0.input = .demuxer(device) }
        if stop.isRequested { device.interrupt() }
        clock.deviceReopened(grid: CaptureInput.grid(device, routes))
        audioStart.restart()
        supervisor.reopened(failedAt: failed)
        return device
    }

    private var encodersDone: Bool {
        (video.map { $0.isDone } ?? true) && (audio.map { $0.isDone } ?? true)
    }

    private var finished = false
    private func finishEncoders() {
        guard !finished else { return }
        finished = true
        do { try video?.finish() } catch { failure = failure ?? error }
        do { try audio?.finish() } catch { failure = failure ?? error }
    }
    /// An error from flushing the encoders, which `run` reports after its own.
    private(set) var failure: Error?

    /// Hands every frame the decoder has ready to the encoder; false once all encoders are done.
    private func deliverDecoded(_ route: CaptureInput.Route, _ decoder: Decoder, _ frame: Frame, _ stop: StopSignal) throws -> Bool {
        while case .value = try decoder.receive(into: frame) {
            if try !deliver(frame, route, stop) { return false }
        }
        return true
    }

    /// Puts one frame on the capture clock, paces it, and hands it to the encoder of its stream
    /// (a live device's first audio frames once their start is settled); false once all encoders
    /// are done (or a stop came while pacing).
    private func deliver(_ frame: Frame, _ route: CaptureInput.Route, _ stop: StopSignal) throws -> Bool {
        defer { frame.unreference() }
        let now = Timestamp.monotonicMicroseconds()
        let time = clock.time(of: frame, route.kind, in: route.timeBase, now: now)
        guard let captured = clock.pace(time, now: now, stop: stop) else { return false }
        if !originPublished, let origin = clock.origin {
            originPublished = true
            publishedOrigin.withLock { $0 = origin }
        }
        // The stamp may be later than the settled time, never earlier: zero still comes after
        // the first sample of every input.
        started(at: time)
        guard isLive, route.kind == .audio else { return try hand(frame, route, at: time, captured: captured, now: now) }
        return try hand(try audioStart.take(frame, at: time, arrival: now), route)
    }

    /// Hands a live device's audio frames still held to the encoder (the input ended, failed or
    /// was stopped before their start settled); false once all encoders are done.
    private func releaseHeldAudio() throws -> Bool {
        guard let route = routes.values.first(where: { $0.kind == .audio }) else { return true }
        return try hand(audioStart.release(), route)
    }

    /// Hands a live device's audio frames, as `AudioStartSettling` gave them, to the encoder;
    /// false once all encoders are done.
    private func hand(_ frames: [AudioStartSettling.Timed], _ route: CaptureInput.Route) throws -> Bool {
        for t in frames where try !hand(t.frame, route, at: t.time, captured: min(t.time, t.arrival), now: t.arrival) { return false }
        return true
    }

    /// Hands one frame on the capture clock to the encoder of its stream (`time`; `captured`:
    /// when it counts as captured; `now`: when it arrived); false once all encoders are done.
    private func hand(_ frame: Frame, _ route: CaptureInput.Route, at time: Int64, captured: Int64, now: Int64) throws -> Bool {
        var (time, captured) = (time, captured)
        // Zero waits for every input's first frame (`Timeline`): an earlier frame that would set it
        // is dropped.
        if let timeline, !timeline.admits(route.kind, at: time) { return true }
        var delivered = frame
        if let supervisor {
            guard try supervisor.frameArrives(at: time, now: now) else { return false }
            if route.kind == .audio {
                guard let (rest, at) = try supervisor.admit(audio: frame, at: time) else { return true }
                (delivered, time) = (rest, at)
                captured = min(time, now)
            }
        }
        switch route.kind {
        case .video: _ = try video?.consume(delivered, at: time, capturedAt: captured)
        case .audio: _ = try audio?.consume(delivered, at: time, capturedAt: captured)
        }
        try supervisor?.delivered(delivered, route.kind, at: time)
        return !encodersDone
    }
}
