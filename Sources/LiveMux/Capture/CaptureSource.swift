import Foundation
import FFmpeg

/// One opened input and the thread that reads it: demux and decode (or read a lavfi graph), put
/// every frame on the capture clock, pace it (synthetic and file sources, when real time is asked
/// for), and hand it to the encoder of its stream.
///
/// The capture clock is monotonic microseconds. When any input is a live device (camera, screen,
/// microphone), a device's frames keep the times it stamped them with (`DeviceClock`), and a
/// synthetic or file input's first frame is anchored at the time it arrived, so all share one
/// clock (synthetic ones are then paced, whatever `realtime` says). Otherwise every input starts
/// at zero, so its streams keep their relative timing and two such inputs start together however
/// fast they are read.
final class CaptureSource: @unchecked Sendable {
    // Used by its capture thread only, except `interrupt()`.
    let spec: SourceSpec
    /// Where the frames come from: libavformat (a device or a file) and a decoder per stream, or
    /// a lavfi graph read directly, whose frames need no decoding.
    private enum Input {
        case demuxer(InputDevice)
        case filterGraph(FilterGraph)
    }
    /// Replaced only when a live device that failed is opened again (by the capture thread, under
    /// `inputLock`, which `interrupt()` takes too).
    private var input: Input
    /// A live device's reads, on a thread of their own (`DeviceReader`); under `inputLock`, kept
    /// here for `interrupt()` (the capture thread holds its own reference).
    private var reader: DeviceReader?
    private let inputLock = NSLock()
    /// A wanted stream (a demuxer's stream or a graph's output).
    private struct Route {
        let kind: StreamKind
        let timeBase: Rational
        /// nil for a filter graph's output.
        let decoder: Decoder?
    }
    private var routes: [Int: Route] = [:]
    /// What the wanted streams say they deliver (size, rates, channels).
    let format: SourceFormat
    private var video: FrameConsumer?
    private var audio: FrameConsumer?
    private var paced: Bool
    private var anchorToArrival = false
    /// The timeline that waits for this input's first frame (`Timeline.expectInput`): set when it
    /// shares the capture clock with a live input.
    private var timeline: Timeline?
    private var hasStarted = false
    private var offset: Int64?
    private var deviceClock = DeviceClock()
    /// What `--stats` shows about this input, when it is a live device.
    let deviceStatus: DeviceStatus?
    /// A live video device's frame grid (`FrameGrid`); nil for everything else.
    private var frameGrid: FrameGrid?
    private var paceStart: Int64 = 0
    private var lastTime: [StreamKind: Int64] = [:]
    /// A live device that fails is opened again with these options (`DeviceOutage`); meanwhile
    /// `fill` keeps its streams going.
    private let openOptions: [(String, String)]
    private let reopening: DeviceReopening
    private let report: @Sendable (String) -> Void
    private var fill: DeviceFill
    /// When a device that was reopened failed (µs): its first frame fills the gap before it.
    private var returning: Int64?

    /// Opens the input and the decoders for the wanted streams; throws if one is missing.
    /// `frameRate`: the recording's frame rate (`--fps`), which a screen grab is asked for.
    /// `reopening`, `report`: what a live device that fails gets, and where its warning goes.
    init(spec: SourceSpec, video wantVideo: Bool, audio wantAudio: Bool, realtime: Bool, frameRate: FrameRate?,
         reopening: DeviceReopening = DeviceReopening(), report: @escaping @Sendable (String) -> Void = { _ in }) throws {
        self.spec = spec
        self.reopening = reopening
        self.report = report
        openOptions = DeviceDefaults.options(for: spec, frameRate: frameRate).sorted { $0.key < $1.key }
        do {
            // The lavfi device's own options (graph_file, dumpgraph) still need the device.
            if spec.format == FilterGraph.formatName && spec.options.isEmpty {
                input = .filterGraph(try FilterGraph(description: spec.url))
            } else {
                input = .demuxer(try InputDevice(format: spec.format, url: spec.url, options: openOptions))
            }
        } catch let error as FFmpegError {
            let deviceHint = DeviceCatalog.hint(for: spec)
            let hint = deviceHint.isEmpty ? " (check the device or path; `FORMAT:URL` such as lavfi:testsrc2 or v4l2:/dev/video0)" : deviceHint
            throw ExplainedError("cannot open input '\(spec.description)': \(error.message)\(hint)", cause: error)
        } catch let error as InputDevice.UnknownOption {
            throw ExplainedError("input '\(spec.description)' has no option '\(error.key)' (--video-opt and --audio-opt take"
                                 + " the options of the device or demuxer: ffmpeg -h demuxer=\(spec.format ?? "NAME"))", cause: error)
        } catch let problem as FilterGraph.Problem {
            throw LiveMuxError.input("cannot use '\(spec.description)' as a source: \(problem)")
        }
        let kinds = [(wantVideo, StreamKind.video), (wantAudio, StreamKind.audio)].filter(\.0).map(\.1)
        switch input {
        case .demuxer(let device):
            routes = try Self.routes(device, kinds, spec)
        case .filterGraph(let graph):
            for kind in kinds {
                guard let output = graph.firstOutput(kind == .video ? .video : .audio) else { throw Self.missing(kind, spec) }
                routes[output.index] = Route(kind: kind, timeBase: output.timeBase, decoder: nil)
            }
        }
        let wanted = routes
        let chosen = { (kind: StreamKind) in wanted.first { $0.value.kind == kind }?.key }
        switch input {
        case .demuxer(let d):
            format = SourceFormat(video: chosen(.video).map { d.streams[$0] }, audio: chosen(.audio).map { d.streams[$0] }, device: d.isDevice)
        case .filterGraph(let g): format = SourceFormat(video: chosen(.video).map { g.outputs[$0] }, audio: chosen(.audio).map { g.outputs[$0] })
        }
        // lavfi is a libavdevice "device" too, but it makes frames as fast as it is asked.
        if case .demuxer(let device) = input {
            isLive = device.isDevice && device.formatName != FilterGraph.formatName
        } else {
            isLive = false
        }
        paced = realtime && !isLive
        deviceStatus = isLive ? DeviceStatus(name: spec.description) : nil
        if isLive, case .demuxer(let device) = input { frameGrid = Self.grid(device, routes) }
        // A gap is filled at the device's rate (as its grid, from avg_frame_rate when need be).
        let rate = format.frameRate.doubleValue > 0 ? format.frameRate : format.averageFrameRate
        fill = DeviceFill(framesPerSecond: rate.doubleValue)
    }

    /// A decoder for each wanted stream of a device, by stream index.
    private static func routes(_ device: InputDevice, _ kinds: [StreamKind], _ spec: SourceSpec) throws -> [Int: Route] {
        var routes: [Int: Route] = [:]
        for kind in kinds {
            guard let stream = device.bestStream(kind == .video ? .video : .audio) else { throw missing(kind, spec) }
            routes[stream.index] = Route(kind: kind, timeBase: stream.timeBase,
                                         decoder: try Decoder(parameters: stream.parameters, timeBase: stream.timeBase))
        }
        return routes
    }

    private static func missing(_ kind: StreamKind, _ spec: SourceSpec) -> LiveMuxError {
        .input("input '\(spec.description)' has no \(kind.rawValue) stream (use --no-\(kind.rawValue) or give a --\(kind.rawValue) source)")
    }

    /// A live video device's frame grid, when its video is wanted.
    private static func grid(_ device: InputDevice, _ routes: [Int: Route]) -> FrameGrid? {
        guard let stream = device.bestStream(.video), routes[stream.index] != nil else { return nil }
        // Devices are not probed, so r_frame_rate is unset for most (x11grab): then avg_frame_rate.
        let rate = stream.baseFrameRate.doubleValue > 0 ? stream.baseFrameRate : stream.averageFrameRate
        return FrameGrid(framesPerSecond: rate.doubleValue, counting: device.formatName == "x11grab")
    }

    /// A camera, screen or microphone: it runs at its own pace, on the wall clock.
    let isLive: Bool

    /// Whether frames are delivered on the capture clock (real time asked for, or another input
    /// is live).
    var isPaced: Bool { paced }

    /// Puts this input on the wall clock because another input is live.
    func shareClockWithLiveInput() {
        anchorToArrival = true
        paced = !isLive
    }
    var streamKinds: [StreamKind] { routes.values.map(\.kind).sorted() }

    func attach(video: FrameConsumer?, audio: FrameConsumer?, timeline: Timeline) {
        self.video = video
        self.audio = audio
        if isLive || anchorToArrival {
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
        inputLock.lock()
        defer { inputLock.unlock() }
        if case .demuxer(let device) = input { device.interrupt() }
        reader?.wake()
    }

    /// Reads until the input ends, every encoder is done, or a stop is requested; then flushes the
    /// decoders and encoders and ends their streams. The streams end even when it throws.
    func run(stop: StopSignal) throws {
        defer { finishEncoders() }
        defer { started(at: Timestamp.monotonicMicroseconds()) }
        let frame = try Frame()
        switch input {
        case .filterGraph(let graph):
            while !stop.isRequested, let index = try graph.read(into: frame) {
                guard let route = routes[index] else { continue }
                if try !deliver(frame, route, stop) { break }
            }
        case .demuxer(let device):
            var reader = isLive ? setReader(DeviceReader.start(device)) : nil
            defer { setReader(nil) }
            let own = try Packet()
            reading: while !stop.isRequested {
                let packet: Packet
                if let live = reader {
                    // A live device that fails, ends or stalls is ridden out (filled, reopened):
                    // the recording goes on.
                    let next = Self.next(from: live, reopening)
                    if stop.isRequested { break reading }
                    if let problem = next.problem {
                        guard let back = try rejoin(after: problem, since: next.since, stop: stop) else { break reading }
                        reader = setReader(DeviceReader.start(back))
                        continue
                    }
                    guard let read = next.packet else { continue }
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
        }
    }

    /// The next packet of a live device, or why there is none (`problem`: it ended, failed, or
    /// delivered nothing for `stallTimeout`, `startTimeout` before its first packet) with since
    /// when; neither when the wait ended without any of these (a stop woke it).
    private static func next(from reader: DeviceReader, _ policy: DeviceReopening) -> (packet: Packet?, problem: String?, since: Int64) {
        let quiet = reader.quiet
        let limit = quiet.afterData ? policy.stallTimeout : policy.startTimeout
        let now = Timestamp.monotonicMicroseconds()
        switch reader.next(until: quiet.since + Int64(limit * 1_000_000)) {
        case .packet(let p): return (p, nil, now)
        case .ended: return (nil, "it ended", now)
        case .failed(let why): return (nil, why, now)
        case .waiting:
            let since = reader.quiet.since
            guard Timestamp.monotonicMicroseconds() - since >= Int64(limit * 1_000_000) else { return (nil, nil, now) }
            let what = quiet.afterData ? "it stalled: nothing read for" : "nothing read from it in the first"
            return (nil, "\(what) \(DeviceOutage.seconds(limit)) s", since)
        }
    }

    /// Replaces the live device's reader (where `interrupt()` finds it) and returns it; the one
    /// before is given up (see `DeviceReader`).
    @discardableResult
    private func setReader(_ new: DeviceReader?) -> DeviceReader? {
        inputLock.lock()
        let old = reader
        reader = new
        inputLock.unlock()
        old?.abandon()
        return new
    }

    /// The device failed (`since`: when it last delivered): fills its streams and opens it again
    /// (`DeviceOutage`); the device once it is back, nil when the recording stopped or is
    /// complete meanwhile. Throws at the timeout.
    private func rejoin(after problem: String, since: Int64, stop: StopSignal) throws -> InputDevice? {
        setReader(nil)
        started(at: Timestamp.monotonicMicroseconds())
        let name = Self.masked(spec)
        let outage = DeviceOutage(name: name, policy: reopening, stop: stop, failed: since)
        deviceStatus?.failed()
        let filling = [video.map { _ in "its last frame" }, audio.map { _ in "silence" }].compactMap { $0 }.joined(separator: " and ")
        report("device '\(name)' failed (\(problem)); recording \(filling) in its place while it is reopened"
               + " (for up to \(DeviceOutage.seconds(reopening.timeout)) s: --device-timeout)")
        let (spec, options) = (self.spec, openOptions)
        guard let device = try outage.rideOut(problem: problem, fill: { try fillGap(upTo: $0) }, open: {
            try InputDevice(format: spec.format, url: spec.url, options: options)
        }) else { return nil }
        routes = try Self.routes(device, streamKinds, spec)
        inputLock.lock()
        input = .demuxer(device)
        inputLock.unlock()
        if stop.isRequested { device.interrupt() }
        deviceClock = DeviceClock()
        frameGrid = Self.grid(device, routes)
        returning = outage.failed
        deviceStatus?.reopened()
        return device
    }

    /// Fills this device's streams up to `time` (µs on the capture clock); false once the
    /// encoders want no more.
    private func fillGap(upTo time: Int64) throws -> Bool {
        let more = try fill.fill(upTo: time, audio: audio, video: video)
        deviceStatus?.filled(seconds: fill.filledSeconds, frames: fill.filledFrames)
        return more
    }

    /// A source as messages name it: credentials in its URL masked.
    static func masked(_ spec: SourceSpec) -> String {
        var s = spec
        s.url = maskedURL(spec.url)
        return s.description
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
    private func deliverDecoded(_ route: Route, _ decoder: Decoder, _ frame: Frame, _ stop: StopSignal) throws -> Bool {
        while case .value = try decoder.receive(into: frame) {
            if try !deliver(frame, route, stop) { return false }
        }
        return true
    }

    /// Puts one frame on the capture clock, paces it, and hands it to the encoder of its stream;
    /// false once all encoders are done (or a stop came while pacing).
    private func deliver(_ frame: Frame, _ route: Route, _ stop: StopSignal) throws -> Bool {
        defer { frame.unreference() }
        let now = Timestamp.monotonicMicroseconds()
        var raw = frame.bestEffortTimestamp
        if raw == Timestamp.none { raw = frame.pts }
        var time: Int64
        if raw == Timestamp.none {
            time = (lastTime[route.kind] ?? 0) + 1
        } else {
            let t = Timestamp.rescale(raw, from: route.timeBase, to: .microseconds)
            if isLive {
                time = deviceClock.captureTime(stamp: t, arrival: now)
                deviceStatus?.observed(clock: deviceClock.source, captured: time, arrived: now)
                if route.kind == .video, frameGrid != nil { time = frameGrid!.place(time) }
            } else {
                if offset == nil { offset = anchorToArrival ? now - t : -t }
                time = t + offset!
            }
        }
        lastTime[route.kind] = time
        // A device's frame was captured when it says (latency counts from there), never later
        // than it arrived.
        var captured = isLive ? min(time, now) : now
        if paced {
            if paceStart == 0 { paceStart = now - time }
            let due = paceStart + time
            if due > now {
                guard stop.sleep(untilMonotonic: due) else { return false }
                captured = due
            }
        }
        started(at: time)
        // Zero waits for every input's first frame (`Timeline`): an earlier frame that would set it
        // is dropped.
        if let timeline, !timeline.admits(route.kind, at: time) { return true }
        var delivered = frame
        if isLive {
            if let failed = returning {
                // A reopened device's first frame: the gap before it is filled first.
                returning = nil
                let away = Double(now - failed) / 1_000_000
                deviceStatus?.back(after: away)
                report("device '\(Self.masked(spec))' is back after \(String(format: "%.1f", away)) s")
                guard try fillGap(upTo: time) else { return false }
            }
            if route.kind == .audio {
                guard let (rest, at) = try fill.admit(audio: frame, at: time) else { return true }
                (delivered, time) = (rest, at)
                captured = min(time, now)
            }
        }
        switch route.kind {
        case .video: _ = try video?.consume(delivered, at: time, capturedAt: captured)
        case .audio: _ = try audio?.consume(delivered, at: time, capturedAt: captured)
        }
        if isLive {
            switch route.kind {
            case .video: try fill.delivered(video: delivered, at: time)
            case .audio: fill.delivered(audio: delivered, at: time)
            }
        }
        return !encodersDone
    }
}
