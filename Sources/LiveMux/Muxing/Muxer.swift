import Foundation
import FFmpeg

/// Muxes packets that are already encoded (H.264/HEVC and AAC, from any encoder, a network or a
/// file) into ASF or FLV, on the same mux thread and container writer as `livemux record`.
///
/// Give it packets in any packaging (Annex B or AVCC/HVCC; ADTS or raw AAC); it normalizes them,
/// waits until every stream's parameters are known, writes the header, and from then on hands out
/// labelled `Chunk`s — to the `sinks`, to `onChunk`, and to `chunks` — as the packets are
/// interleaved by timestamp. `finish()` writes the trailer.
///
/// Thread-safety: every method may be called from any thread; video and audio may come from two
/// threads at once. Packets of one stream must come in decoding order.
///
/// Parameter changes: a new SPS/PPS (such as a new frame size) in FLV makes the muxer write a new
/// sequence header (AVC, or HEVC's SequenceStart) before that packet. ASF cannot change its
/// header, so there `addVideo` throws `LiveMuxError.unsupported` and drops the packet; start a
/// new `Muxer` for the new parameters.
public final class Muxer: @unchecked Sendable {
    // Each stream's intake has its own lock; the gate holds packets until the session starts,
    // and the session owns the writers.
    let session: MuxSession
    private let video: VideoIntake?
    private let audio: AudioIntake?
    private let gate: MuxerStartGate
    private var queue: MuxQueue { session.queue }
    private let statistics = Statistics()
    private let warningCounter: MuxerWarningCounter
    private let delivery: CallbackSink
    /// Packets each stream may queue by default before `add…` waits for the mux thread.
    public static let defaultQueueCapacity = 256

    /// Every chunk, in order, ending after the trailer, for a muxer made with `onChunk` or without
    /// sinks (with sinks only, it just ends at `finish()`). Chunks are buffered only once this has
    /// been read, so a muxer used through `onChunk` keeps nothing in memory.
    public var chunks: AsyncStream<Chunk> { delivery.requestStream() }

    /// Creates a muxer. Nothing is written until every stream's parameters are known.
    ///
    /// - Parameters:
    ///   - format: the container, ASF or FLV.
    ///   - video: the video stream, if any.
    ///   - audio: the audio stream, if any.
    ///   - sinks: destinations for the chunks (`FileSink`, `StandardOutputSink`, your own).
    ///   - seekable: true when every destination applies the trailer's updates to earlier bytes (a
    ///     file: the header then gets the true duration and ASF an index); false for a stream.
    ///   - flvHEVC: how FLV signals HEVC (Enhanced RTMP's FourCC, or codec id 12).
    ///   - queueCapacity: packets each stream may queue before `add…` waits for the mux thread.
    ///   - singleProducer: true when one thread may add both streams' packets (then a stream
    ///     that gets `queueCapacity` packets ahead is released rather than waiting forever for
    ///     the other); false when each stream has its own thread (the one ahead waits).
    ///   - onChunk: called on the mux thread with every chunk; must not block for long.
    ///   - onWarning: called with a line the first time each kind of bad packet is dropped.
    public convenience init(format: ContainerFormat, video: VideoStreamDescription?, audio: AudioStreamDescription?,
                            sinks: [ChunkSink] = [], seekable: Bool = false, flvHEVC: FLVHEVCMode = .enhanced,
                            queueCapacity: Int = Muxer.defaultQueueCapacity,
                            singleProducer: Bool = true,
                            onChunk: (@Sendable (Chunk) -> Void)? = nil,
                            onWarning: @escaping @Sendable (String) -> Void = { _ in }) throws {
        var outputs = Outputs()
        outputs.flvHEVC = flvHEVC
        try self.init(video: video, audio: audio, route: (format, seekable, sinks), outputs: outputs,
                      queueCapacity: queueCapacity, singleProducer: singleProducer, wakeBatch: 1,
                      onChunk: onChunk, onWarning: onWarning)
    }

    /// The same, for `livemux mux`: the caller's sinks for one container (`route`) and/or the
    /// `outputs` a session makes itself. `wakeBatch` above 1 lets packets wait for the mux thread
    /// in batches (see `MuxQueue`), and `recycle` takes the written packets back to the reader
    /// (see `PacketPool`).
    init(video: VideoStreamDescription?, audio: AudioStreamDescription?,
         route: (format: ContainerFormat, seekable: Bool, sinks: [ChunkSink])?, outputs: Outputs,
         queueCapacity: Int, singleProducer: Bool, wakeBatch: Int, streamingASFPacketSize: Int? = nil,
         recycle: PacketPool? = nil,
         onChunk: (@Sendable (Chunk) -> Void)?, onWarning: @escaping @Sendable (String) -> Void) throws {
        LogLevel.applyChosen()
        guard video != nil || audio != nil else { throw LiveMuxError.invalid("a muxer needs a video or an audio stream") }
        var formats = Set(outputs.destinations.map(\.format))
        if let route { formats.insert(route.format) }
        if outputs.listen != nil { formats.formUnion(ContainerFormat.allCases) }
        if !outputs.destinations.isEmpty || outputs.listen != nil { try outputs.validate() }
        if let warning = outputs.enhancedRTMPWarning(video: video?.codec) { onWarning(warning) }
        if let a = audio, a.sampleRate <= 0 || a.channels <= 0 {
            throw LiveMuxError.invalid("audio needs a sample rate and a channel count above 0")
        }
        let videoNormalizer = try video.map {
            try VideoNormalizer(codec: $0.codec, width: $0.width, height: $0.height, extradata: $0.extradata,
                                prefersLengthPrefixed: formats == [.flv])
        }
        let audioNormalizer = try audio.map { try AudioNormalizer(sampleRate: $0.sampleRate, channels: $0.channels, extradata: $0.extradata) }
        let kinds = [video.map { _ in StreamKind.video }, audio.map { _ in StreamKind.audio }].compactMap { $0 }
        let queue = MuxQueue(streams: kinds, capacity: queueCapacity, singleProducer: singleProducer, wakeBatch: wakeBatch)
        delivery = CallbackSink(onChunk)
        // The callback route counts as a destination only when it is one: with sinks and no
        // onChunk, a failed sink (a closed stdout) must stop the muxer, not leave it running for nobody.
        let hasOutputs = !(route?.sinks.isEmpty ?? true) || !outputs.destinations.isEmpty || outputs.listen != nil
        var callbackRoute = route
        if onChunk != nil || !hasOutputs {
            callbackRoute = (route?.format ?? formats.first ?? .flv, route?.seekable ?? false, (route?.sinks ?? []) + [delivery])
        }
        session = try MuxSession(queue: queue, outputs: outputs, streams: nil, extraRoute: callbackRoute,
                                 streamingASFPacketSize: streamingASFPacketSize, statistics: statistics, recycle: recycle,
                                 report: onWarning)
        let gate = MuxerStartGate(session: session, streams: kinds,
                                  pushBatch: singleProducer && wakeBatch > 1 ? MuxerStartGate.fileReadingBatch : 1)
        // The intakes' closures below may capture locals only: self is not initialized yet.
        let statistics = self.statistics
        let warnings = MuxerWarningCounter(statistics: statistics, report: onWarning)
        self.gate = gate
        warningCounter = warnings
        self.video = try videoNormalizer.map {
            try VideoIntake($0, formats: formats, gate: gate, warnings: warnings, statistics: statistics)
        }
        self.audio = try audioNormalizer.map { try AudioIntake($0, gate: gate, warnings: warnings, statistics: statistics) }
    }

    // MARK: Video

    /// Adds one video access unit.
    ///
    /// - Parameters:
    ///   - bytes: Annex B (start codes) or length-prefixed NAL units; with `isExtraData`, the
    ///     parameter sets (Annex B or an avcC/hvcC record) and no picture.
    ///   - pts: presentation time in units of `1/timescale`.
    ///   - dts: decoding time; nil when equal to `pts` (no B-frames).
    ///   - timescale: units per second of `pts` and `dts` (1000: milliseconds).
    ///   - isKeyframe: whether a decoder can start at this packet.
    ///   - isExtraData: the packet carries parameter sets only.
    /// - Throws: `LiveMuxError` when the muxer cannot go on (stopped, ASF parameter change, or
    ///   too many packets before the other stream's parameters); bad packets are dropped and counted.
    public func addVideo(_ bytes: [UInt8], pts: Int64, dts: Int64? = nil, timescale: Int32 = 1000,
                         isKeyframe: Bool, isExtraData: Bool = false) throws {
        guard let video else { throw LiveMuxError.invalid("this muxer has no video stream") }
        guard timescale > 0 else { throw LiveMuxError.invalid("timescale must be above 0") }
        if isExtraData { return try video.addParameterSets(bytes) }
        try video.add(try Packet(copying: bytes), pts: pts, dts: dts, timescale: timescale, isKeyframe: isKeyframe)
    }

    /// `addVideo` for a packet the caller hands over (a demuxer's, as `livemux mux` reads them):
    /// no copy of the payload on the way in.
    func addVideo(_ packet: Packet, pts: Int64, dts: Int64? = nil, timescale: Int32, isKeyframe: Bool) throws {
        guard let video else { throw LiveMuxError.invalid("this muxer has no video stream") }
        guard timescale > 0 else { throw LiveMuxError.invalid("timescale must be above 0") }
        try video.add(packet, pts: pts, dts: dts, timescale: timescale, isKeyframe: isKeyframe)
    }

    // MARK: Audio

    /// Adds AAC audio: one raw frame, or one or more ADTS frames (each 1024 samples; the ones after
    /// the first are stamped from the sample count, never rounded).
    ///
    /// - Parameters:
    ///   - bytes: a raw AAC frame or ADTS frames.
    ///   - pts: presentation time of the first frame in units of `1/timescale`; use the sample rate
    ///     as `timescale` (and the running sample count as `pts`) for exact timing.
    ///   - timescale: units per second of `pts` (1000: milliseconds).
    public func addAudio(_ bytes: [UInt8], pts: Int64, timescale: Int32 = 1000) throws {
        try addAudio(try Packet(copying: bytes), pts: pts, timescale: timescale)
    }

    /// `addAudio` for a packet the caller hands over (a demuxer's): no copy of the payload.
    func addAudio(_ packet: Packet, pts: Int64, timescale: Int32) throws {
        guard let audio else { throw LiveMuxError.invalid("this muxer has no audio stream") }
        guard timescale > 0 else { throw LiveMuxError.invalid("timescale must be above 0") }
        try audio.add(packet, pts: pts, timescale: timescale)
    }

    /// Whether audio of this rate and channel count fits the stream; counts one that does not.
    func acceptsAudio(sampleRate: Int, channels: Int) -> Bool {
        audio?.accepts(sampleRate: sampleRate, channels: channels) ?? true
    }

    // MARK: Finishing

    /// Writes what is queued and the trailer, closes the sinks and ends `chunks`. Streams whose
    /// parameters never arrived are left out. Throws the mux thread's first failure, or when no
    /// stream ever had parameters (nothing was written).
    public func finish() throws {
        let (first, failure) = gate.close()
        guard first else { return }
        var sessionFailure: Error? = nil
        do { try session.finish() } catch { sessionFailure = error }
        delivery.finishStream()
        // A producer's failure (a reader's, in `livemux mux`) says more than its consequences.
        if let failure = sessionFailure ?? failure { throw failure }
    }

    /// Stops at once: queued packets are dropped, the trailer is still written (call `finish()`
    /// to wait for it). Packets added afterwards are refused.
    public func cancel() {
        queue.cancel()
    }

    deinit {
        // A muxer dropped without `finish()` must not leave its mux thread waiting forever.
        queue.cancel()
    }

    /// How many packets of each kind were dropped instead of muxed.
    public var warnings: [MuxerWarning: Int] { warningCounter.snapshot }

    /// Counters: packets in, dropped, bytes out, media time.
    public var statisticsSnapshot: StatisticsSnapshot {
        var s = statistics.snapshot
        s.takeNetwork(session.networkSnapshots)
        return s
    }
}
