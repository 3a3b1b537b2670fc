import FFmpeg

/// Places one input file's packets on the muxer's timeline (`livemux mux`).
///
/// The file's streams share one origin, the earliest of the first video DTS and the first audio
/// PTS, so their timing relative to each other is the file's own (a B-frame stream's first
/// picture is shown after its first DTS, as the audio expects). Video keeps the container's
/// timestamps, with decoding timestamps derived where it stores none; an elementary stream is
/// timed by its frame count. Audio is timed by its frame count (1024 samples), so it never
/// drifts by rounding.
struct InputTimeline {
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
    init(video: InputDevice.Stream?, audio: InputDevice.Stream?, rawVideo: Bool, fps: FrameRate, leading: [Packet]) {
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

    /// A video packet's place: PTS and DTS in units of `1/timescale`; nil when it has no
    /// timestamp at all (it cannot be placed).
    mutating func video(_ packet: Packet) -> (pts: Int64, dts: Int64, timescale: Int32)? {
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
        return (audioStart + audioFrames * 1024, sampleRate)
    }
}
