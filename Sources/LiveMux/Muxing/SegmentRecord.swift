/// A segment that was closed complete (its trailer written): what `--stats`, the stderr line and
/// `--segment-list` say about it.
public struct SegmentRecord: Sendable, Equatable {
    public let path: String
    /// 0 for the first segment of its output.
    public let index: Int
    /// Its first and its end timestamp on the recording's running timeline, in seconds.
    public let start: Double
    public let end: Double
    public let bytes: Int64

    public var duration: Double { end - start }
}
