/// How video is encoded: codec, size, rate, bit rate, GOP (`--vcodec`, `--size`, `--fps`…).
public struct VideoSettings: Sendable, Equatable {
    public var codec: VideoCodec = .h264
    /// The frame size (both, or neither): nil keeps the source's own; the built-in test source
    /// makes `builtInWidth`x`builtInHeight`. Another size is scaled to.
    public var width: Int?
    public var height: Int?
    /// Nil keeps the source's own rate (the built-in test source's: `builtInFrameRate`). At
    /// another rate each frame takes its slot on the timeline's frame grid: a faster source's
    /// extra frames are dropped, a slower one leaves slots empty.
    public var fps: FrameRate?
    public var bitRate = 2_000_000
    /// Follow the primary network output's link (H.264): the bit rate steps down to fit it and
    /// climbs back to `bitRate`, never below `minimumBitRate`.
    public var adaptiveBitRate = true
    /// With an adapting URL output, files, stdout and live viewers take its encode too (and so
    /// its bit rate) instead of an encode of their own at `bitRate`: half the CPU (docs/benchmarks.md, case 6).
    public var sharedEncode = false
    /// The adaptive bit rate's floor; nil: a quarter of `bitRate`.
    public var minimumBitRate: Int?
    var effectiveMinimumBitRate: Int { minimumBitRate ?? bitRate / 4 }
    public var gopSeconds: Double = 2
    public var preset = "veryfast"
    /// Encoder tuning; `zerolatency` also turns off B-frames and look-ahead.
    public var tune = "zerolatency"

    public init() {}

    static let builtInWidth = 1280
    static let builtInHeight = 720
    static let builtInFrameRate = FrameRate(30)!
}
