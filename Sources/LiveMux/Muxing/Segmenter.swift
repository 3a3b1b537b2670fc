import FFmpeg

/// Where one file output is cut, and the writers of its segments. A cut is made before a video
/// keyframe (any packet, without video): the mux thread hands packets over in DTS order, video
/// first at equal times, so every audio packet before the keyframe's time is in the closing
/// segment and every one from it on in the next — no sample in two files, none in neither. Each
/// segment gets a fresh `ContainerWriter` (its own header and trailer), whose timestamps start at
/// the keyframe (0) unless the running timeline is kept.
final class Segmenter {
    // Used by the mux thread only.
    /// The output's sink, joined when the session starts.
    var sink: SegmentFileSink?
    private let plan: SegmentPlan
    private let hasVideo: Bool
    /// A writer for a segment whose timestamps start at the packet given (nil: at 0).
    private let makeWriter: (EncodedPacket?) throws -> ContainerWriter
    /// The segment's first time and its end so far (µs on the running timeline), and its bytes.
    private var start: Int64 = 0
    private var end: Int64 = 0
    private var bytes: Int64 = 0
    private var packets = 0
    /// Cuts asked for (`SegmentPlan.requestCut`) that this output has made.
    private var servedRequests = 0
    /// Whether the first packet came.
    private var begun = false

    init(plan: SegmentPlan, hasVideo: Bool, makeWriter: @escaping (EncodedPacket?) throws -> ContainerWriter) {
        self.plan = plan
        self.hasVideo = hasVideo
        self.makeWriter = makeWriter
    }

    /// The first segment's writer.
    func firstWriter() throws -> ContainerWriter { try makeWriter(nil) }

    /// Whether the segment ends before `p`: it is a keyframe where a cut may be, and the segment
    /// reached its duration or size, passed a wall-clock period, or a cut was asked for.
    /// A segment cut here ends at `p`'s time (an audio packet before it may reach past it: the
    /// next segment's audio starts that much after 0, so the timeline is kept across the cut).
    func cutsBefore(_ p: EncodedPacket) -> Bool {
        if !begun {
            // The clock's anchor is the first frame encoded; without an encoder (`mux`), the first
            // packet. A cut asked for before anything was written has nothing to cut.
            begun = true
            _ = plan.wallClock(atMedia: Self.microseconds(p.dts, p.timeBase))
            servedRequests = plan.cutRequests
        }
        guard packets > 0, p.isKeyframe, p.stream == .video || !hasVideo else { return false }
        let t = Self.microseconds(p.dts, p.timeBase)
        guard reachedLimit(at: t) else { return false }
        sink?.span.end = t
        return true
    }

    private func reachedLimit(at t: Int64) -> Bool {
        let requests = plan.cutRequests
        if requests > servedRequests {
            servedRequests = requests
            return true
        }
        if let period = plan.clockPeriod(atMedia: t) {
            if period > plan.clockPeriod(atMedia: start)! { return true }
        } else if let d = plan.policy.durationMicroseconds, t - start >= d {
            return true
        }
        if let size = plan.policy.size, bytes >= size { return true }
        return false
    }

    /// The next segment's writer, starting at `p`; the segment before must have had its trailer.
    func nextWriter(at p: EncodedPacket) throws -> ContainerWriter {
        start = Self.microseconds(p.dts, p.timeBase)
        end = start
        bytes = 0
        packets = 0
        sink?.span = (start, end)
        sink?.beginNext(wallClock: plan.wallClock(atMedia: start))
        return try makeWriter(plan.policy.keepTimestamps ? nil : p)
    }

    /// Counts what `p` added to the segment.
    func wrote(_ p: EncodedPacket, bytes count: Int) {
        packets += 1
        bytes += Int64(count)
        let duration = max(p.packet.duration, 0)
        end = max(end, Self.microseconds(p.dts + duration, p.timeBase))
        sink?.span.end = end
    }

    private static func microseconds(_ t: Int64, _ base: Rational) -> Int64 { Timestamp.rescale(t, from: base, to: .microseconds) }
}
