import FFmpeg

/// One video encode of the placed frames (a codec, size, rate and bit rate that some outputs
/// asked for) and the mux sessions its packets go to (`PacketTee`). Frames come placed on the
/// recording's frame grid; a lane at another rate places each on its own grid, dropping frames
/// that land on a slot already filled and repeating one into slots left empty. Its bit rate may
/// follow the first URL output's link or the control API (`target`). Used by the video encoder's
/// thread only.
final class VideoLane {
    /// The size and rate this lane encodes at.
    let format: VideoFormat
    private let encoder: Encoder
    let tee: PacketTee
    /// Where a new bit rate comes from (the primary network output's link, the control API);
    /// nil: a constant bit rate.
    let target: BitRateTarget?
    private let statistics: Statistics
    private var captureTimes: [Int64: Int64] = [:]
    /// The last slot of this lane's grid encoded (-1: none yet).
    private var lastSlot: Int64 = -1
    /// A keyframe was asked for on a frame this lane's rate dropped: the next frame is one.
    private var keyframeOwed = false
    /// Every session it feeds was cancelled (every output of them stopped): nothing more is wanted.
    private(set) var isDone = false

    /// VBV buffer, in seconds of the bit rate: libx264 takes a new rate only with VBV on.
    static let vbvSeconds = 0.25

    init(settings: VideoSettings, format: VideoFormat, tee: PacketTee, target: BitRateTarget?, statistics: Statistics,
         quiet: Bool) throws {
        var s = Encoder.Settings(codecName: settings.codec.encoderName, bitRate: settings.bitRate,
                                 timeBase: format.fps.frameDuration)
        s.width = format.width
        s.height = format.height
        s.frameRate = format.fps.rational
        s.gopSize = format.gopFrames(settings.gopSeconds)
        s.maxBFrames = 0  // ASF stamps payloads with DTS, so no frame may be reordered
        if target != nil {
            s.maxRate = settings.bitRate
            s.bufferSize = Int(Double(settings.bitRate) * Self.vbvSeconds)
        }
        // A forced keyframe (a segment's cut) is an IDR, where a file can start.
        s.options = [("preset", settings.preset), ("tune", settings.tune), ("forced-idr", "1")]
        // Parameter sets also before every keyframe, so a reader joining mid-stream can decode.
        switch settings.codec {
        case .h264: s.options.append(("x264-params", "repeat-headers=1"))
        case .hevc: s.options.append(("x265-params", "repeat-headers=1:bframes=0:log-level=\(quiet ? "none" : "error")"))
        }
        encoder = try Encoder(s)
        self.format = format
        self.tee = tee
        self.target = target
        self.statistics = statistics
    }

    /// The parameters a muxer needs for this stream (with the SPS/PPS in extradata).
    func streamDescription() throws -> ContainerWriter.StreamDescription {
        var rate: (@Sendable () -> Int)?
        if let target { rate = { target.current } }
        return .init(kind: .video, parameters: try encoder.parameters(), timeBase: encoder.timeBase, bitRateNow: rate)
    }

    /// Applies a new bit rate, if there is one, before the next frame.
    func followBitRate() {
        guard let rate = target?.takeChange() else { return }
        encoder.setBitRate(rate, maxRate: rate, bufferSize: Int(Double(rate) * Self.vbvSeconds))
    }

    /// Encodes `frame` (already at this lane's size) placed at slot `slot` of the recording's
    /// grid `grid` (a keyframe if asked), and queues what the encoder has ready.
    func encode(_ frame: Frame, slot: Int64, of grid: FrameRate, capturedAt wallTime: Int64, keyframe given: Bool = false) throws {
        guard !isDone else { return }
        // A session joining while the job runs starts at a keyframe: the next one is forced.
        let keyframe = given || tee.takeKeyframeRequest()
        let own = grid == format.fps ? slot : Self.slot(of: slot, on: grid, at: format.fps)
        guard own > lastSlot else {
            keyframeOwed = keyframeOwed || keyframe
            return
        }
        // A faster lane repeats the frame into the slots between the recording's frames, never
        // across a gap the recording itself left (at most one of its frames' worth).
        let repeats = lastSlot < 0 ? 0 : min(own - lastSlot - 1, Self.slotsPerFrame(of: grid, at: format.fps) - 1)
        for s in (own - repeats)...own {
            frame.pts = s
            captureTimes[s] = wallTime
            try encoder.send(frame, keyframe: keyframe || keyframeOwed)
            keyframeOwed = false
            try drain()
        }
        lastSlot = own
    }

    /// The slot of this lane's grid that holds slot `slot` of the recording's: the last one that
    /// starts at or before it, so a frame is never shown before it was captured.
    private static func slot(of slot: Int64, on grid: FrameRate, at rate: FrameRate) -> Int64 {
        slot * Int64(grid.denominator) * Int64(rate.numerator) / (Int64(grid.numerator) * Int64(rate.denominator))
    }

    /// How many of its own slots a lane at `rate` has per frame of the recording's `grid`, at least 1.
    private static func slotsPerFrame(of grid: FrameRate, at rate: FrameRate) -> Int64 {
        max(1, Int64((rate.framesPerSecond / grid.framesPerSecond).rounded(.up)))
    }

    /// Flushes the encoder and ends the stream.
    func finish() throws {
        if !isDone {
            try encoder.send(nil)
            try drain()
        }
        tee.end(.video)
    }

    private func drain() throws {
        while case .value(let packet) = try encoder.receive() {
            if packet.duration <= 0 { packet.duration = 1 }
            let captured = captureTimes.removeValue(forKey: packet.pts) ?? 0
            if tee.measures { statistics.countEncoded(.video, bytes: packet.size) }
            // Frames sit on the 1/fps grid, one per slot, in order (a drift step drops or repeats
            // whole frames), and nothing is reordered (no B-frames): the next DTS is a slot later.
            if try !tee.push(packet, stream: .video, timeBase: encoder.timeBase, captureTime: captured, nextDTSAtLeast: packet.dts + 1) {
                isDone = true
                return
            }
        }
    }
}
