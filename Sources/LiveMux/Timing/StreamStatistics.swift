import Foundation
import FFmpeg

/// Counters for one stream.
public struct StreamStatistics: Sendable, Equatable {
    /// Frames that arrived from capture.
    public var framesIn = 0
    /// Encoded packets queued for the muxer.
    public var packetsOut = 0
    /// Frames or packets dropped (before the start, duplicate timestamps, late).
    public var dropped = 0
    /// Encoded bytes.
    public var bytes = 0
    /// Frames encoded twice to fill a slot a drift correction left empty.
    public var duplicated = 0
    /// Input timestamps that went backwards or repeated: repaired (audio) or dropped (video).
    public var timestampRepairs = 0
    /// Video: the media time (s) of the newest frame placed on the output's grid, what is being
    /// encoded now; the muxed media time trails it by the encode and the queues.
    public var placedTime = 0.0
}
