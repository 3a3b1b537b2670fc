import FFmpeg

/// One muxer and what it needs to turn encoded packets into labelled chunks: the stream map, the
/// time bases the muxer chose, and the last DTS written per stream.
final class ContainerWriter: @unchecked Sendable {
    // Used by the mux thread only.
    /// The container; nil for the browsers' fragmented MP4 (`BrowserStream`).
    let format: ContainerFormat?
    let seekable: Bool
    private let container: any ContainerMuxer
    // `@exclusivity(unchecked)`: fields of the per-packet path, used by one thread (or under a
    // lock) with no overlapping access; see "Exclusivity" in docs/architecture.md.
    @exclusivity(unchecked) private var streamIndex = PerStream<Int?>(repeating: nil)
    @exclusivity(unchecked) private var outputTimeBase = PerStream<Rational?>(repeating: nil)
    @exclusivity(unchecked) private var lastDTS = PerStream<Int64?>(repeating: nil)
    /// `lastDTS` in milliseconds, the one clock every stream's packets compare on (and chunks carry).
    @exclusivity(unchecked) private var lastMilliseconds = PerStream<Int64?>(repeating: nil)
    /// Where this writer's timestamps start (a segment's first keyframe: DTS and time base); nil: 0.
    @exclusivity(unchecked) private var origin: (dts: Int64, timeBase: Rational)?
    /// The origin is the first packet's DTS (an output added while the job runs: its keyframe).
    private let startsAtFirstPacket: Bool
    /// The origin in each stream's packet time base, subtracted from every timestamp before it is
    /// rescaled: subtracting two rounded milliseconds put a segment's frames off their grid
    /// (0, 33, 66 ms at 30 fps), and ffmpeg's CLI then gave two frames one slot.
    @exclusivity(unchecked) private var originOffset = PerStream<(timeBase: Rational, dts: Int64)?>(repeating: nil)

    struct StreamDescription {
        let kind: StreamKind
        let parameters: CodecParameters
        let timeBase: Rational
        /// The bit rate the encoder runs at now, when it can change while the job runs.
        var bitRateNow: (@Sendable () -> Int)? = nil

        /// The stream as a header written now describes it: a segment opened after `ctl vbitrate`
        /// says the new rate in its metadata, not the one the job started at.
        func now() throws -> StreamDescription {
            guard let rate = bitRateNow?(), rate != parameters.bitRate else { return self }
            return StreamDescription(kind: kind, parameters: try parameters.with(bitRate: rate), timeBase: timeBase, bitRateNow: bitRateNow)
        }
    }

    init(format: ContainerFormat, seekable: Bool, streams: [StreamDescription], asfPacketSize: Int? = nil,
         flvHEVC: FLVHEVCMode = .enhanced, origin: (dts: Int64, timeBase: Rational)? = nil, startsAtFirstPacket: Bool = false) throws {
        self.format = format
        self.seekable = seekable
        self.origin = origin
        self.startsAtFirstPacket = startsAtFirstPacket
        let sorted = streams.sorted(by: { $0.kind < $1.kind })
        if format == .flv && sorted.contains(where: { $0.kind == .video && $0.parameters.isHEVC }) {
            // FFmpeg 5.1's FLV muxer has no HEVC: LiveMux writes these FLV tags itself.
            container = try FLVTagWriter(streams: sorted.map { ($0.kind, $0.parameters) }, seekable: seekable, mode: flvHEVC)
            for (i, s) in sorted.enumerated() { streamIndex[s.kind] = i }
            return
        }
        var options: [(String, String)] = []
        switch format {
        case .flv where !seekable:
            // A stream has no duration or size to announce, and nothing can update them later.
            options.append(("flvflags", "no_duration_filesize"))
        case .asf:
            if let size = asfPacketSize { options.append(("packet_size", String(size))) }
        default: break
        }
        let container = try OutputContainer(formatName: format.muxerName, seekable: seekable, options: options)
        for s in sorted {
            // FFmpeg 5.1's ASF tables have no HEVC tag; `HEVC` is the fourcc players (VLC) map.
            let hevcInASF = format == .asf && s.parameters.isHEVC
            guard hevcInASF || OutputContainer.canCarry(s.parameters, formatName: format.muxerName) else {
                throw LiveMuxError.unsupported("\(format.rawValue.uppercased()) cannot carry \(s.parameters.codecName) in FFmpeg 5.1")
            }
            streamIndex[s.kind] = try container.addStream(s.parameters, timeBase: s.timeBase, codecTag: hevcInASF ? "HEVC" : nil)
        }
        self.container = container
    }

    /// The browsers' stream (`BrowserStream`): fragmented MP4 on the media clock, one fragment a
    /// packet, from the same packets as every other writer.
    init(browserStreams streams: [StreamDescription]) throws {
        format = nil
        seekable = false
        startsAtFirstPacket = false
        let sorted = streams.sorted(by: { $0.kind < $1.kind })
        if let refused = sorted.first(where: { !BrowserStream.canCarry($0) }) {
            throw LiveMuxError.unsupported("the browser stream (\(BrowserStream.path)) cannot carry \(refused.parameters.codecName): browsers play H.264 and AAC")
        }
        let container = try OutputContainer(formatName: BrowserStream.muxerName, seekable: false, options: BrowserStream.muxerOptions,
                                            flushesEachPacket: true)
        for s in sorted { streamIndex[s.kind] = try container.addStream(s.parameters, timeBase: s.timeBase) }
        self.container = container
    }

    func header() throws -> Chunk {
        let bytes = try container.writeHeader().array
        let bases = container.streamTimeBases
        for kind in StreamKind.allCases { outputTimeBase[kind] = streamIndex[kind].map { bases[$0] } }
        return Chunk(kind: .header, bytes: bytes)
    }

    /// Writes one packet (its timestamps rescaled into the muxer's time base); nil when it was
    /// dropped because it would make DTS go backwards.
    func write(_ p: EncodedPacket) throws -> Chunk? {
        guard let index = streamIndex[p.stream], let tb = outputTimeBase[p.stream] else { return nil }
        if origin == nil && startsAtFirstPacket { origin = (p.dts, p.timeBase) }
        let offset = self.offset(p.stream, in: p.timeBase)
        var dts = Timestamp.rescale(p.dts - offset, from: p.timeBase, to: tb)
        var pts = Timestamp.rescale(p.packet.pts - offset, from: p.timeBase, to: tb)
        if origin != nil {
            if p.stream == .video, framePeriod == nil, p.packet.duration > 0 {
                framePeriod = Double(p.packet.duration) * p.timeBase.doubleValue * 1_000_000
            }
            if p.stream == .audio {
                if audioNudge == nil { audioNudge = Self.nudge(audioStart: dts, tick: tb, framePeriod: framePeriod) }
                dts += audioNudge!
                pts += audioNudge!
            }
        }
        if let last = lastDTS[p.stream], dts <= last {
            // Rounding into milliseconds can make neighbours equal; keep DTS strictly increasing.
            guard dts == last else { return nil }
            dts += 1
            pts = max(pts + 1, dts)
        }
        // Never backwards across streams: ASF aborts if that happens inside one of its packets.
        // Only a packet released early by a full queue (MuxQueue.pop) can get here.
        // The mux thread counts what comes back nil as dropped.
        // Compared in milliseconds: MP4's streams each keep a clock of their own.
        let dtsMilliseconds = tb == Rational.milliseconds ? dts : Timestamp.rescale(dts, from: tb, to: Rational.milliseconds)
        if dtsMilliseconds < max(lastMilliseconds.video ?? .min, lastMilliseconds.audio ?? .min) { return nil }
        lastDTS[p.stream] = dts
        lastMilliseconds[p.stream] = dtsMilliseconds
        // Several writers may share one encoded packet: the container writes it with this
        // writer's timestamps and leaves it as it was.
        let bytes = try container.write(p.packet, stream: index, pts: pts, dts: dts,
                                        duration: Timestamp.rescale(p.packet.duration, from: p.timeBase, to: tb))
        return Chunk(kind: .media(stream: p.stream, dts: dtsMilliseconds, isKeyframe: p.isKeyframe), muxed: bytes,
                     captureTime: p.captureTime)
    }

    /// How many ticks a segment's audio is moved (0 or ±1; see `nudge`), fixed by its first packet.
    @exclusivity(unchecked) private var audioNudge: Int64?
    /// A segment's video frame period (µs), from its first frame.
    @exclusivity(unchecked) private var framePeriod: Double?

    /// A segment's audio starts after its keyframe, by what the audio packet across the cut
    /// leaves; FFmpeg's ASF reader gives video no PTS and starts the file at the audio. Where that
    /// start falls within half a tick of half a frame, the video's times, rounded to whole
    /// milliseconds, land either side of the middle of ffmpeg's frame slots and two frames take
    /// one; one tick (1 ms, under the container's own rounding twice over) moves the audio clear.
    static func nudge(audioStart: Int64, tick: Rational, framePeriod: Double?) -> Int64 {
        guard let period = framePeriod, period > 0 else { return 0 }
        let tickMicroseconds = tick.doubleValue * 1_000_000
        let phase = (Double(audioStart) * tickMicroseconds).truncatingRemainder(dividingBy: period) / period
        guard abs(phase - 0.5) * period <= tickMicroseconds / 2 else { return 0 }
        return phase < 0.5 ? -1 : 1
    }

    /// The origin in `timeBase`, the time base of `stream`'s packets (0 without an origin); the
    /// keyframe at the origin is so exactly 0.
    private func offset(_ stream: StreamKind, in timeBase: Rational) -> Int64 {
        guard let origin else { return 0 }
        if let known = originOffset[stream], known.timeBase == timeBase { return known.dts }
        let dts = Timestamp.rescale(origin.dts, from: origin.timeBase, to: timeBase)
        originOffset[stream] = (timeBase, dts)
        return dts
    }

    func trailer() throws -> Chunk {
        let t = try container.writeTrailer()
        return Chunk(kind: .trailer, bytes: t.appended,
                     updates: t.updates.map { Chunk.Update(offset: $0.offset, bytes: $0.bytes) })
    }
}
