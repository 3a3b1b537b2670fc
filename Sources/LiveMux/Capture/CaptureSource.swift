import FFmpeg

/// One opened input and the thread that reads it: demux, decode, put every frame on the capture
/// clock, pace it (synthetic and file sources, when real time is asked for), and hand it to the
/// encoder of its stream.
///
/// The capture clock is in microseconds. When any input is a live device (camera, screen,
/// microphone), every input's first frame is anchored at the monotonic time it arrived, so all
/// share the wall clock (synthetic ones are then paced, whatever `realtime` says). Otherwise every
/// input starts at zero, so its streams keep their relative timing and two such inputs start
/// together however fast they are read.
final class CaptureSource: @unchecked Sendable {
    // Used by its capture thread only, except `interrupt()`.
    let spec: SourceSpec
    private let device: InputDevice
    private struct Route {
        let stream: InputDevice.Stream
        let decoder: Decoder
        let kind: StreamKind
    }
    private var routes: [Int: Route] = [:]
    private var video: FrameConsumer?
    private var audio: FrameConsumer?
    private var paced: Bool
    private var anchorToArrival = false
    private var offset: Int64?
    private var paceStart: Int64 = 0
    private var lastTime: [StreamKind: Int64] = [:]

    /// Opens the input and the decoders for the wanted streams; throws if one is missing.
    init(spec: SourceSpec, video wantVideo: Bool, audio wantAudio: Bool, realtime: Bool) throws {
        self.spec = spec
        do {
            device = try InputDevice(format: spec.format, url: spec.url, options: spec.options.sorted { $0.key < $1.key })
        } catch let error as FFmpegError {
            throw LiveMuxError.input("cannot open input '\(spec.description)': \(error.message)"
                                     + " (check the device or path; `FORMAT:URL` such as lavfi:testsrc2 or v4l2:/dev/video0)")
        }
        for (want, kind) in [(wantVideo, StreamKind.video), (wantAudio, StreamKind.audio)] where want {
            guard let stream = device.bestStream(kind == .video ? .video : .audio) else {
                throw LiveMuxError.input("input '\(spec.description)' has no \(kind.rawValue) stream"
                                         + " (use --no-\(kind.rawValue) or give a --\(kind.rawValue) source)")
            }
            let decoder = try Decoder(parameters: stream.parameters, timeBase: stream.timeBase)
            routes[stream.index] = Route(stream: stream, decoder: decoder, kind: kind)
        }
        // lavfi is a libavdevice "device" too, but it makes frames as fast as it is asked.
        isLive = device.isDevice && device.formatName != "lavfi"
        paced = realtime && !isLive
    }

    /// A camera, screen or microphone: it runs at its own pace, on the wall clock.
    let isLive: Bool

    /// Puts this input on the wall clock because another input is live.
    func shareClockWithLiveInput() {
        anchorToArrival = true
        paced = !isLive
    }
    var streamKinds: [StreamKind] { routes.values.map(\.kind).sorted() }

    func attach(video: FrameConsumer?, audio: FrameConsumer?) {
        self.video = video
        self.audio = audio
    }

    /// Makes a blocked read return (any thread).
    func interrupt() { device.interrupt() }

    /// Reads until the input ends, every encoder is done, or a stop is requested; then flushes the
    /// decoders and encoders and ends their streams. The streams end even when it throws.
    func run(stop: StopSignal) throws {
        defer { finishEncoders() }
        let packet = Packet()
        let frame = Frame()
        reading: while !stop.isRequested {
            guard try device.read(into: packet) else { break }
            guard let route = routes[packet.streamIndex] else { continue }
            try route.decoder.send(packet)
            if try !deliver(route, frame, stop) { break reading }
        }
        // Drain what the decoders still hold (only when the input ended by itself or the duration
        // was reached: a stop delivers nothing more).
        if !stop.isRequested {
            for route in routes.values {
                try route.decoder.send(nil)
                _ = try deliver(route, frame, stop)
            }
        }
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
    private func deliver(_ route: Route, _ frame: Frame, _ stop: StopSignal) throws -> Bool {
        while case .value = try route.decoder.receive(into: frame) {
            defer { frame.unreference() }
            let now = Timestamp.monotonicMicroseconds()
            var raw = frame.bestEffortTimestamp
            if raw == Timestamp.none { raw = frame.pts }
            var time: Int64
            if raw == Timestamp.none {
                time = (lastTime[route.kind] ?? 0) + 1
            } else {
                let t = Timestamp.rescale(raw, from: route.stream.timeBase, to: .microseconds)
                if offset == nil { offset = isLive || anchorToArrival ? now - t : -t }
                time = t + offset!
            }
            lastTime[route.kind] = time
            var captured = now
            if paced {
                if paceStart == 0 { paceStart = now - time }
                let due = paceStart + time
                if due > now {
                    guard stop.sleep(untilMonotonic: due) else { return false }
                    captured = due
                }
            }
            switch route.kind {
            case .video: _ = try video?.consume(frame, at: time, capturedAt: captured)
            case .audio: _ = try audio?.consume(frame, at: time, capturedAt: captured)
            }
            if encodersDone { return false }
        }
        return true
    }
}
