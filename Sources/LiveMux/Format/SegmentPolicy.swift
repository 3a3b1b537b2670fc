/// How file outputs are cut into segments (`--segment-time`, `--segment-size`…). Only files are
/// cut: stdout, URLs and live viewers get one continuous stream.
public struct SegmentPolicy: Sendable, Equatable {
    /// A new segment at the first video keyframe this many seconds after the segment began.
    public var duration: Double?
    /// A new segment at the first video keyframe once the segment holds this many bytes.
    public var size: Int64?
    /// Cut on wall-clock multiples of `duration` (hourly files at :00), with a keyframe forced there.
    public var atClock = false
    /// Only the newest this many segments stay: the oldest is deleted once a new one is complete.
    public var keep: Int?
    /// Every segment keeps the running timeline instead of starting at 0.
    public var keepTimestamps = false
    /// The first segment's number (the pattern's `%d`), as ffmpeg's `segment_start_number`: a
    /// recording restarted beside its earlier segments goes on after them.
    public var startNumber = 0

    public init() {}

    /// The keyframe interval that cuts segments on time: the longest of at most `longest` seconds
    /// that `duration` holds a whole number of (1 s segments: 1 s; 3 s: 1.5 s; 10 s: 2 s). nil
    /// where nothing is cut by time, or `atClock` forces a keyframe at every cut anyway.
    public func keyframeInterval(atMost longest: Double) -> Double? {
        guard let duration, !atClock else { return nil }
        return duration / (duration / longest).rounded(.up)
    }

    /// How long segments cut at keyframes `gop` seconds apart last when they are cut by time
    /// alone: the duration rounded up to whole GOPs (a cut waits for the next keyframe).
    public func lengthCut(everyKeyframe gop: Double) -> Double? {
        guard let duration, !atClock else { return nil }
        return (duration / gop - Self.roundingSlack).rounded(.up) * gop
    }

    /// What a quotient of two decimals may be off by in a double (3 / 1.5 must stay 2).
    private static let roundingSlack = 1e-9

    /// The duration in microseconds, which the cut compares with exactly.
    var durationMicroseconds: Int64? { duration.map { Int64(($0 * 1_000_000).rounded()) } }
}
