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

    /// The duration in microseconds, which the cut compares with exactly.
    var durationMicroseconds: Int64? { duration.map { Int64(($0 * 1_000_000).rounded()) } }
}
