import FFmpeg

/// Places one input file's packets on the muxer's timeline (`livemux mux`).
///
/// The file's streams share one origin, the earliest of the first video DTS and the first audio
/// PTS, so their timing relative to each other is the file's own (a B-frame stream's first
/// picture is shown after its first DTS, as the audio expects). Video keeps the container's
/// timestamps, with decoding timestamps derived where it stores none; an elementary stream is
/// timed by its frame count, and with B-frames its pictures are shown in the order their picture
/// order counts give (`PresentationOrder`). Audio is timed by its frame count (1024 samples), so
/// it never drifts by rounding.
struct InputTimeline {
    /// A video packet's place: PTS and DTS in units of `1/timescale`.
    typealias Place = (pts: Int64, dts: Int64, timescale: Int32)

    /// How many packets may wait at the start for the other stream's first one.
    static let leadingLimit = 1024

    private let videoIndex: Int?
    private let audioIndex: Int?
    /// Elementary video: frame n is at n / fps.
    private let elementaryRate: FrameRate?
    /// Container video: its time base, and the origin in it.
    private let videoBase: Rational
    private let videoOrigin: Int64
    /// Set when the container gives no decoding timestamps.
    private var derived: DecodingTimestamps?
    private let sampleRate: Int32
    private let audioStart: Int64
    private var videoFrames: Int64 = 0
    private var audioFrames: Int64 = 0
    /// Elementary video with B-frames: pictures wait for their place in presentation order,
    /// read from each one's picture order count by `parser`.
    private var presentation: PresentationOrder<Packet>?
    private let parser: Parser?
    /// The video packet added and not yet handed out (any other video is placed at once).
    private var added: Packet?

    /// Whether `leading` holds enough of the file's first packets to fix the timeline: the first
    /// of each stream and, for container video, `DecodingTimestamps.lookahead` video packets.
    static func hasEnough(_ leading: [Packet], video: InputDevice.Stream?, audio: InputDevice.Stream?, rawVideo: Bool) -> Bool {
        if leading.count >= leadingLimit { return true }
        if let v = video, !rawVideo,
           leading.lazy.filter({ $0.streamIndex == v.index }).count < DecodingTimestamps.lookahead { return false }
        if let v = video, rawVideo, !leading.contains(where: { $0.streamIndex == v.index }) { return false }
        if let a = audio, !leading.contains(where: { $0.streamIndex == a.index }) { return false }
        return true
    }

    /// - Parameter leading: the file's first packets in read order (see `hasEnough`).
    init(video: InputDevice.Stream?, audio: InputDevice.Stream?, rawVideo: Bool, fps: FrameRate, leading: [Packet]) throws {
        if let v = video, rawVideo, v.parameters.videoDelay > 0 {
            let parser = try Parser(hevc: v.parameters.isHEVC)
            // Parameter sets come in-band too; any given apart must be known before the first slice.
            if !v.parameters.extradata.isEmpty { _ = parser.parse(v.parameters.extradata) }
            self.parser = parser
            presentation = PresentationOrder(depth: v.parameters.videoDelay)
        } else {
            parser = nil
        }
        videoIndex = video?.index
        audioIndex = audio?.index
        elementaryRate = video != nil && rawVideo ? fps : nil
        videoBase = video?.timeBase ?? .milliseconds
        sampleRate = Int32(audio?.parameters.sampleRate ?? 1)
        var origin: (Int64, Rational)? = nil
        func consider(_ t: Int64, _ base: Rational) {
            if origin.map({ Timestamp.compare(t, base, $0.0, $0.1) < 0 }) ?? true { origin = (t, base) }
        }
        var firstVideoDTS: Int64? = nil
        if let v = video, !rawVideo {
            let packets = leading.filter { $0.streamIndex == v.index && $0.pts != Timestamp.none }
            if let first = packets.first, first.dts == Timestamp.none {
                derived = DecodingTimestamps(leading: packets.map(\.pts), knownDepth: v.parameters.videoDelay)
                var probe = derived!
                firstVideoDTS = probe.next(pts: first.pts)
            } else {
                firstVideoDTS = packets.first?.dts
            }
            if let d = firstVideoDTS { consider(d, v.timeBase) }
        }
        var firstAudioPTS: Int64 = 0
        if let a = audio, let first = leading.first(where: { $0.streamIndex == a.index && $0.pts != Timestamp.none }) {
            firstAudioPTS = first.pts
            consider(first.pts, a.timeBase)
        }
        let samples = Rational(1, sampleRate)
        if let a = audio, let origin {
            // The origin is at or before the first audio sample; rounding must not put it after.
            audioStart = max(0, Timestamp.rescale(firstAudioPTS, from: a.timeBase, to: samples)
                                - Timestamp.rescale(origin.0, from: origin.1, to: samples))
        } else {
            audioStart = 0
        }
        if let origin, let firstVideoDTS {
            // Likewise the first video DTS: an origin rounded past it would make it negative.
            videoOrigin = min(Timestamp.rescale(origin.0, from: origin.1, to: videoBase), firstVideoDTS)
        } else {
            videoOrigin = 0
        }
    }

    /// Whether the packet belongs to the file's video or audio stream.
    func stream(of packet: Packet) -> StreamKind? {
        if packet.streamIndex == videoIndex { return .video }
        if packet.streamIndex == audioIndex { return .audio }
        return nil
    }

    /// Takes the next video packet in decoding order. `nextVideo` hands it out with its place:
    /// at once, or for elementary video with B-frames once its place in presentation order is known.
    mutating func add(video packet: Packet) {
        guard presentation != nil, let parser else {
            added = packet
            return
        }
        // A packet with no picture in it (never seen from libavformat) is shown after the others.
        let info = parser.parse(packet)
        presentation!.add(packet, order: info?.pictureOrder ?? .max, isKeyframe: info?.isKeyframe ?? packet.isKeyframe)
    }

    /// At the end of the file: every video packet held gets its place.
    mutating func endVideo() { presentation?.finish() }

    /// The next video packet whose place is known, in decoding order; its place is nil when it
    /// has no timestamp at all (it cannot be placed).
    mutating func nextVideo() -> (packet: Packet, place: Place?)? {
        if presentation != nil, let fps = elementaryRate {
            guard let (packet, decoded, shown) = presentation!.next() else { return nil }
            // Frame n is at n / fps; the first picture is shown `depth` frames after its DTS.
            let frame = Int64(fps.denominator)
            return (packet, ((shown + Int64(presentation!.depth)) * frame, decoded * frame, Int32(fps.numerator)))
        }
        guard let packet = added.take() else { return nil }
        return (packet, place(packet))
    }

    private mutating func place(_ packet: Packet) -> Place? {
        if let fps = elementaryRate {
            defer { videoFrames += 1 }
            let t = videoFrames * Int64(fps.denominator)
            return (t, t, Int32(fps.numerator))
        }
        var pts = packet.pts, dts = packet.dts
        if derived != nil {
            guard pts != Timestamp.none else { return nil }
            dts = derived!.next(pts: pts)
        } else {
            if dts == Timestamp.none { dts = pts }
            if pts == Timestamp.none { pts = dts }
            guard dts != Timestamp.none else { return nil }
        }
        let scale = Int64(videoBase.num)
        return ((pts - videoOrigin) * scale, (dts - videoOrigin) * scale, videoBase.den)
    }

    /// An audio packet's PTS in samples (the timescale is the sample rate).
    mutating func audio() -> (pts: Int64, timescale: Int32) {
        defer { audioFrames += 1 }
        return (audioStart + audioFrames * Int64(CodecParameters.aacFrameSamples), sampleRate)
    }
}
