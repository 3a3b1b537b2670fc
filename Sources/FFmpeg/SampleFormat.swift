import CFFmpeg

/// An audio sample format, kept as its raw value.
public struct SampleFormat: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let floatPlanar = SampleFormat(rawValue: AV_SAMPLE_FMT_FLTP.rawValue)
    public static let s16 = SampleFormat(rawValue: AV_SAMPLE_FMT_S16.rawValue)
    public var description: String {
        av_get_sample_fmt_name(AVSampleFormat(rawValue: rawValue)).map { String(cString: $0) } ?? "none"
    }
    var av: AVSampleFormat { AVSampleFormat(rawValue: rawValue) }
}
