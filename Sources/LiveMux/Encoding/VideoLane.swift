import FFmpeg

/// One encode of the placed video frames and the mux queue its packets go to. A recording has
/// one; with files beside an adapting URL output it has two — the files keep `--vbitrate` while
/// the URL outputs' encode follows the link (`Pipeline.encodesApart`). Used by the video
/// encoder's thread only.
final class VideoLane {
    private let encoder: Encoder
    private let queue: MuxQueue
    /// The bit rate the primary network output asks for; nil: a constant `--vbitrate`.
    private let adaptive: AdaptiveBitrate?
    /// The session its queue feeds: its packets are the recording's in the statistics while that
    /// session measures (`Statistics.measures`: the first, until every output of it stopped).
    private let session: Int
    private let statistics: Statistics
    private var captureTimes: [Int64: Int64] = [:]
    /// Its mux queue was cancelled (every output of it stopped): nothing more is wanted.
    private(set) var isDone = false

    /// VBV buffer, in seconds of the bit rate: libx264 takes a new rate only with VBV on.
    static let vbvSeconds = 0.25

    init(settings: VideoSettings, format: VideoFormat, queue: MuxQueue, adaptive: AdaptiveBitrate?, session: Int,
         statistics: Statistics, quiet: Bool) throws {
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
        // A forced keyframe (a segment's cut) is an IDR, where a file can start.
        s.options = [("preset", settings.preset), ("tune", settings.tune), ("forced-idr", "1")]
        // Parameter sets also before every keyframe, so a reader joining mid-stream can decode.
        switch settings.codec {
        case .h264: s.options.append(("x264-params", "repeat-headers=1"))
        case .hevc: s.options.append(("x265-params", "repeat-headers=1:bframes=0:log-level=\(quiet ? "none" : "error")"))
        }
        encoder = try Encoder(s)
        self.queue = queue
        self.adaptive = adaptive
        self.session = session
        self.statistics = statistics
    }

    /// The parameters a muxer needs for this stream (with the SPS/PPS in extradata).
    func streamDescription() throws -> ContainerWriter.StreamDescription {
        .init(kind: .video, parameters: try encoder.parameters(), timeBase: encoder.timeBase)
    }

    /// Applies a new target of the adaptive bit rate, if there is one, before the next frame.
    func followBitRate() {
        guard let rate = adaptive?.takeChange() else { return }
        encoder.setBitRate(rate, maxRate: rate, bufferSize: Int(Double(rate) * Self.vbvSeconds))
    }

    /// Encodes `frame` at grid slot `pts` (a keyframe if asked) and queues what the encoder has ready.
    func encode(_ frame: Frame, pts: Int64, capturedAt wallTime: Int64, keyframe: Bool = false) throws {
        guard !isDone else { return }
        frame.pts = pts
        captureTimes[pts] = wallTime
        try encoder.send(frame, keyframe: keyframe)
        try drain()
    }

    /// Flushes the encoder and ends the stream.
    func finish() throws {
        if !isDone {
            try encoder.send(nil)
            try drain()
        }
        queue.end(.video)
    }

    private func drain() throws {
        while case .value(let packet) = try encoder.receive() {
            if packet.duration <= 0 { packet.duration = 1 }
            let captured = captureTimes.removeValue(forKey: packet.pts) ?? 0
            if statistics.measures(session) { statistics.countEncoded(.video, bytes: packet.size) }
            // Frames sit on the 1/fps grid, one per slot, in order (a drift step drops or repeats
            // whole frames), and nothing is reordered (no B-frames): the next DTS is a slot later.
            if !queue.push(EncodedPacket(stream: .video, packet: packet, timeBase: encoder.timeBase, captureTime: captured,
                                         nextDTSAtLeast: packet.dts + 1)) {
                isDone = true
                return
            }
        }
    }
}
