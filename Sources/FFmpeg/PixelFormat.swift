import CFFmpeg

/// A pixel format by name (`av_get_pix_fmt`), kept as its raw value.
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public init?(name: String) {
        let v = av_get_pix_fmt(name)
        if v == AV_PIX_FMT_NONE { return nil }
        rawValue = v.rawValue
    }
    public static let yuv420p = PixelFormat(rawValue: AV_PIX_FMT_YUV420P.rawValue)
    public var description: String {
        av_get_pix_fmt_name(AVPixelFormat(rawValue: rawValue)).map { String(cString: $0) } ?? "none"
    }
    var av: AVPixelFormat { AVPixelFormat(rawValue: rawValue) }
}
