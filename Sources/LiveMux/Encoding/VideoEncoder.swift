import FFmpeg

/// Turns captured video frames into encoded packets on the shared timeline: places each frame on
/// the output frame grid, converts it with libswscale, encodes it and queues the packets.
/// Runs on its capture thread.
final class VideoEncoder: FrameConsumer, @unchecked Sendable {
    // Used by one capture thread only.
    let settings: VideoSettings
    /// The size and rate encoded at (the frame grid is 1/fps).
    let format: VideoFormat
    private let encoder: Encoder
    private let timeline: Timeline
    private let queue: MuxQueue
    private let statistics: Statistics
    private var scaler: Scaler?
    private let frameLimit: Int64?
    private var lastPTS: Int64 = -1
    private var lastCorrection: Int64 = 0
    private var lastInputTime: Int64?
    private var captureTimes: [Int64: Int64] = [:]
    /// The bit rate the primary network output asks for (H.264 with a network output).
    private let adaptive: AdaptiveBitrate?
    /// VBV buffer, in seconds of the bit rate: libx264 takes a new rate only with VBV on.
    static let vbvSeconds = 0.25
    private(set) var isDone = false

    init(settings: VideoSettings, format: VideoFormat, timeline: Timeline, queue: MuxQueue, statistics: Statistics,
         duration: Double?, quiet: Bool, adaptive: AdaptiveBitrate? = nil) throws {
        self.settings = settings
        self.format = format
        var s = Encoder.Settings(codecName: settings.codec.encoderName, bitRate: settings.bitRate,
                                 timeBase: format.fps.frameDuration)
        s.width = format.width
        s.height = format.height
        s.frameRate = format.fps.rational
        s.gopSize = format.gopFrames(settings.gopSeconds)
        s.maxBFrames = 0  // ASF stamps payloads with DTS, so no frame may be reordered
        if adaptive != nil {
            s.maxRate = settings.bitRate
            s.bufferSize = Int(Double(settings.bitRate) * Self.vbvSeconds)
        }
        self.adaptive = adaptive
        s.options = [("preset", settings.preset), ("tune", settings.tune)]
        // Parameter sets also before every keyframe, so a reader joining mid-stream can decode.
        switch settings.codec {
        case .h264: s.options.append(("x264-params", "repeat-headers=1"))
        case .hevc: s.options.append(("x265-params", "repeat-headers=1:bframes=0:log-level=\(quiet ? "none" : "error")"))
        }
        encoder = try Encoder(s)
        self.timeline = timeline
        self.queue = queue
        self.statistics = statistics
        // A duration shorter than a frame still records the first frame.
        frameLimit = duration.map { max(1, format.fps.frames(in: $0)) }
    }

    /// The parameters a muxer needs for this stream (with the SPS/PPS in extradata).
    func streamDescription() throws -> ContainerWriter.StreamDescription {
        .init(kind: .video, parameters: try encoder.parameters(), timeBase: encoder.timeBase)
    }

    /// Encodes one frame captured at `time` (µs on the capture clock). Returns false once the
    /// duration is reached.
    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        guard !isDone else { return false }
        // A timestamp that repeats or goes backwards: the frame cannot be placed, so it is dropped.
        if let last = lastInputTime, time <= last {
            statistics.countInput(.video)
            statistics.countTimestampRepair(.video)
            statistics.countDropped(.video)
            return true
        }
        lastInputTime = time
        let base = timeline.videoSetsBase ? timeline.establish(at: time) : (timeline.origin ?? time)
        // Audio is the master clock: follow its drift (whole frames; see ClockDrift).
        let correction = timeline.drift.videoCorrection(frameDuration: 1_000_000 / format.fps.framesPerSecond)
        let steppedForward = correction > lastCorrection
        lastCorrection = correction
        // The frame's slot on the output grid (1/fps), rounded to the nearest.
        let pts = Timestamp.rescale(time - base + correction, from: .microseconds, to: format.fps.frameDuration)
        // The frame past the duration ends the stream; it is not part of it, so not counted in.
        if let limit = frameLimit, pts >= limit {
            isDone = true
            return false
        }
        statistics.countInput(.video)
        if pts < 0 || pts <= lastPTS {
            statistics.countDropped(.video)  // before the start, or a second frame for one slot
            return true
        }
        // A drift correction forward leaves a slot empty: this frame fills it too.
        let firstSlot = steppedForward && lastPTS >= 0 && pts - lastPTS == 2 ? lastPTS + 1 : pts
        lastPTS = pts
        let input: Frame
        if frame.width == format.width, frame.height == format.height, frame.format == PixelFormat.yuv420p.rawValue {
            input = frame
        } else {
            if scaler == nil || !scaler!.accepts(frame) {
                scaler = try Scaler(fromWidth: frame.width, height: frame.height, format: frame.format,
                                    toWidth: format.width, height: format.height, format: .yuv420p)
            }
            input = try scaler!.scale(frame)
        }
        if let rate = adaptive?.takeChange() {
            encoder.setBitRate(rate, maxRate: rate, bufferSize: Int(Double(rate) * Self.vbvSeconds))
        }
        for slot in firstSlot...pts {
            if slot < pts { statistics.countDuplicated(.video) }
            input.pts = slot
            captureTimes[slot] = wallTime
            try encoder.send(input)
            if try !drain() { return false }
        }
        return true
    }

    /// Flushes the encoder and ends the stream.
    func finish() throws {
        isDone = true
        try encoder.send(nil)
        _ = try drain()
        queue.end(.video)
    }

    private func drain() throws -> Bool {
        while case .value(let packet) = try encoder.receive() {
            if packet.duration <= 0 { packet.duration = 1 }
            let captured = captureTimes.removeValue(forKey: packet.pts) ?? 0
            statistics.countEncoded(.video, bytes: packet.size)
            // Frames sit on the 1/fps grid, one per slot, in order (a drift step drops or repeats
            // whole frames), and nothing is reordered (no B-frames): the next DTS is a slot later.
            if !queue.push(EncodedPacket(stream: .video, packet: packet, timeBase: encoder.timeBase, captureTime: captured,
                                         nextDTSAtLeast: packet.dts + 1)) {
                isDone = true  // the mux queue was cancelled: nothing more is wanted
                return false
            }
        }
        return true
    }
}
