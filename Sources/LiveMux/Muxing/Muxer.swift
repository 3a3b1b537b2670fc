import Foundation
import FFmpeg
import Synchronization

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
    // Locking: `videoLock` guards `video` and `lastVideo`; `audioLock` guards `audio`,
    // `lastAudio` and `audioFrames`; `stateLock` guards `started`, `pending`, `outbox` and the
    // parameters; `finished` is written under `stateLock` and read without it. The normalizers
    // are touched only under their stream's lock; the session owns the writers. The fields marked
    // `@exclusivity(unchecked)` follow the rule in docs/architecture.md ("Exclusivity").
    /// Every container the session writes: ASF cannot change its header, FLV stores AVCC as it is.
    private let formats: Set<ContainerFormat>
    let session: MuxSession
    private let video: VideoNormalizer?
    private let audio: AudioNormalizer?
    private let videoLock = NSLock(), audioLock = NSLock(), stateLock = NSLock()
    @exclusivity(unchecked) private var lastVideo = LastTimestamp(), lastAudio = LastTimestamp()
    private var queue: MuxQueue { session.queue }
    private let statistics = Statistics()
    private let report: @Sendable (String) -> Void
    @exclusivity(unchecked) private var started = false
    private let finished = Atomic<Bool>(false)
    /// The frames of the packet being added (reused: no array per packet).
    @exclusivity(unchecked) private var audioFrames: [Packet] = []
    @exclusivity(unchecked) private var pending: [EncodedPacket] = []
    /// Packets per queue push (one lock round): `fileReadingBatch` for one file reader, else 1.
    private let pushBatch: Int
    @exclusivity(unchecked) private var outbox: [EncodedPacket] = []
    /// Packets that may wait for the other stream's parameters before that is an error.
    static let pendingLimit = 4096
    /// Packets per queue push with one producer reading files (`pushBatch`).
    static let fileReadingBatch = 64
    /// Packets each stream may queue by default before `add…` waits for the mux thread.
    public static let defaultQueueCapacity = 256
    private var videoParameters: CodecParameters?, audioParameters: CodecParameters?
    private let warningCounter = MuxerWarningCounter()
    private let delivery: CallbackSink

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
        pushBatch = singleProducer && wakeBatch > 1 ? Self.fileReadingBatch : 1
        guard video != nil || audio != nil else { throw LiveMuxError.invalid("a muxer needs a video or an audio stream") }
        var formats = Set(outputs.destinations.map(\.format))
        if let route { formats.insert(route.format) }
        if outputs.listen != nil { formats.formUnion(ContainerFormat.allCases) }
        if !outputs.destinations.isEmpty || outputs.listen != nil { try outputs.validate() }
        if let warning = outputs.enhancedRTMPWarning(video: video?.codec) { onWarning(warning) }
        if let a = audio, a.sampleRate <= 0 || a.channels <= 0 {
            throw LiveMuxError.invalid("audio needs a sample rate and a channel count above 0")
        }
        self.formats = formats
        self.report = onWarning
        self.video = try video.map {
            try VideoNormalizer(codec: $0.codec, width: $0.width, height: $0.height, extradata: $0.extradata,
                                prefersLengthPrefixed: formats == [.flv])
        }
        self.audio = try audio.map { try AudioNormalizer(sampleRate: $0.sampleRate, channels: $0.channels, extradata: $0.extradata) }
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
        if let v = self.video, v.isReady { videoParameters = try v.codecParameters() }
        if let a = self.audio, a.isReady { audioParameters = try a.codecParameters() }
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
        videoLock.lock()
        defer { videoLock.unlock() }
        try checkOpen()
        if isExtraData {
            let wasReady = video.isReady, before = video.extradata
            try video.setParameterSets(bytes)
            if wasReady, before != video.extradata { try checkParameterChange() }
            if !wasReady, video.isReady { try streamBecameReady(.video) }
            return
        }
        try addVideoLocked(try Packet(copying: bytes), pts: pts, dts: dts, timescale: timescale, isKeyframe: isKeyframe)
    }

    /// `addVideo` for a packet the caller hands over (a demuxer's, as `livemux mux` reads them):
    /// no copy of the payload on the way in.
    func addVideo(_ packet: Packet, pts: Int64, dts: Int64? = nil, timescale: Int32, isKeyframe: Bool) throws {
        guard video != nil else { throw LiveMuxError.invalid("this muxer has no video stream") }
        guard timescale > 0 else { throw LiveMuxError.invalid("timescale must be above 0") }
        videoLock.lock()
        defer { videoLock.unlock() }
        try checkOpen()
        try addVideoLocked(packet, pts: pts, dts: dts, timescale: timescale, isKeyframe: isKeyframe)
    }

    /// Normalizes and queues one access unit; under `videoLock`.
    private func addVideoLocked(_ packet: Packet, pts: Int64, dts: Int64?, timescale: Int32, isKeyframe: Bool) throws {
        guard let video else { return }
        let wasReady = video.isReady
        let out: VideoNormalizer.Output
        do {
            out = try video.process(packet, isKeyframe: isKeyframe)
        } catch let problem as VideoNormalizer.Problem {
            switch problem {
            case .beforeParameterSets: warn(.videoBeforeParameterSets)
            case .beforeKeyframe: warn(.videoBeforeKeyframe)
            case .unreadable: warn(.unreadableVideo)
            }
            return
        }
        if out.changedExtradata != nil && wasReady { try checkParameterChange() }
        let base = Rational(1, timescale)
        let d = dts ?? pts
        guard lastVideo.advance(to: d, in: base) else {
            warn(.timestampNotIncreasing)
            return
        }
        out.packet.pts = max(pts, d)
        out.packet.dts = d
        statistics.countPassedThrough(.video, bytes: out.packet.size)
        if !wasReady, video.isReady { try streamBecameReady(.video) }
        try enqueue(EncodedPacket(stream: .video, packet: out.packet, timeBase: base))
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
        audioLock.lock()
        defer { audioLock.unlock() }
        try checkOpen()
        let wasReady = audio.isReady
        let rateBefore = audio.sampleRate
        defer { audioFrames.removeAll(keepingCapacity: true) }
        do {
            try audio.process(packet, into: &audioFrames)
        } catch AudioNormalizer.Problem.parametersChanged {
            warn(.audioParametersChanged)
            return
        } catch is AudioNormalizer.Problem {
            warn(.unreadableAudio)
            return
        }
        if wasReady && audio.sampleRate != rateBefore {
            warn(.audioParametersChanged)
            return
        }
        if !wasReady, audio.isReady { try streamBecameReady(.audio) }
        let base = Rational(1, Int32(audio.sampleRate))
        let first = Timestamp.rescale(pts, from: Rational(1, timescale), to: base)
        for (i, frame) in audioFrames.enumerated() {
            let t = first + Int64(i) * 1024
            guard lastAudio.advance(to: t, in: base) else {
                warn(.timestampNotIncreasing)
                continue
            }
            frame.pts = t
            frame.dts = t
            frame.duration = Int64(CodecParameters.aacFrameSamples)
            statistics.countPassedThrough(.audio, bytes: frame.size)
            try enqueue(EncodedPacket(stream: .audio, packet: frame, timeBase: base))
        }
    }

    /// Whether audio of this rate and channel count fits the stream; counts one that does not.
    func acceptsAudio(sampleRate: Int, channels: Int) -> Bool {
        guard let audio else { return true }
        audioLock.lock()
        let same = audio.sampleRate == sampleRate && audio.channels == channels
        audioLock.unlock()
        if !same { warn(.audioParametersChanged) }
        return same
    }

    // MARK: Finishing

    /// Writes what is queued and the trailer, closes the sinks and ends `chunks`. Streams whose
    /// parameters never arrived are left out. Throws the mux thread's first failure, or when no
    /// stream ever had parameters (nothing was written).
    public func finish() throws {
        stateLock.lock()
        if finished.load(ordering: .relaxed) {
            stateLock.unlock()
            return
        }
        finished.store(true, ordering: .relaxed)
        var failure: Error? = nil
        if !started {
            if videoParameters == nil && audioParameters == nil {
                failure = LiveMuxError.input("no stream ever had its parameters (no SPS/PPS, no AAC config): nothing was written")
            } else {
                do { try startLocked() } catch { failure = error }
            }
        }
        let running = started
        let batch = outbox
        outbox.removeAll()
        stateLock.unlock()
        if running {
            if !batch.isEmpty { _ = queue.push(contentsOf: batch) }
            if video != nil { queue.end(.video) }
            if audio != nil { queue.end(.audio) }
        }
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
    public var statisticsSnapshot: StatisticsSnapshot { statistics.snapshot }

    // MARK: Internals

    private func warn(_ w: MuxerWarning) {
        let first = warningCounter.count(w)
        statistics.countDropped(w == .unreadableAudio || w == .audioParametersChanged ? .audio : .video)
        if first { report(w.description + " (counted)") }
    }

    /// New parameter sets mid-stream: FLV writes a new sequence header, ASF cannot.
    private func checkParameterChange() throws {
        guard formats.contains(.asf) else { return }
        throw LiveMuxError.unsupported("the video parameter sets changed mid-stream (new SPS/PPS, e.g. a new frame size); ASF cannot change its header: start a new muxer for the new parameters, or use FLV")
    }

    private func checkOpen() throws {
        // A mux thread failure shows when the queue refuses a packet (`enqueue`): reading it here
        // would race with the mux thread.
        if finished.load(ordering: .relaxed) { throw LiveMuxError.invalid("the muxer has finished: packets can no longer be added") }
    }

    /// Called under the stream's own lock when its parameters became known.
    private func streamBecameReady(_ kind: StreamKind) throws {
        let p = kind == .video ? try video!.codecParameters() : try audio!.codecParameters()
        stateLock.lock()
        defer { stateLock.unlock() }
        if kind == .video { videoParameters = p } else { audioParameters = p }
    }

    private func enqueue(_ packet: consuming EncodedPacket) throws {
        stateLock.lock()
        if !started {
            pending.append(packet)
            let ready = (video == nil || videoParameters != nil) && (audio == nil || audioParameters != nil)
            var failure: Error? = nil
            if ready {
                do { try startLocked() } catch { failure = error }
            } else if pending.count > Self.pendingLimit {
                let missing = videoParameters == nil ? "video parameter sets (SPS/PPS) or frame size" : "the AAC configuration"
                failure = LiveMuxError.input("\(pending.count) packets arrived but no \(missing): give them as extradata, or send them before the first keyframe")
                pending.removeAll()
            }
            stateLock.unlock()
            if let failure { throw failure }
            return
        }
        guard pushBatch > 1 else {
            stateLock.unlock()
            try check(queue.push(packet))
            return
        }
        outbox.append(packet)
        var batch: [EncodedPacket] = []
        if outbox.count >= pushBatch {
            swap(&batch, &outbox)
            outbox.reserveCapacity(pushBatch)
        }
        stateLock.unlock()
        if !batch.isEmpty { try check(queue.push(contentsOf: batch)) }
    }

    /// Throws why the queue refused a packet.
    private func check(_ accepted: Bool) throws {
        if !accepted {
            // The queue refuses only after cancel(); MuxThread sets `failure` before cancelling,
            // and the queue's lock orders that write before this read.
            throw session.muxFailure ?? LiveMuxError.output("the muxer was stopped (cancel() or a failed sink)")
        }
    }

    /// Starts the session's writers and mux thread and queues what waited. Under `stateLock`.
    private func startLocked() throws {
        var streams: [ContainerWriter.StreamDescription] = []
        if let p = videoParameters { streams.append(.init(kind: .video, parameters: p, timeBase: .milliseconds)) }
        if let p = audioParameters { streams.append(.init(kind: .audio, parameters: p, timeBase: Rational(1, Int32(p.sampleRate)))) }
        try session.start(streams: streams)
        started = true
        if video != nil && videoParameters == nil { queue.end(.video) }
        if audio != nil && audioParameters == nil { queue.end(.audio) }
        let waiting = pending
        pending.removeAll()
        for p in waiting where !queue.push(p) { break }
    }
}
