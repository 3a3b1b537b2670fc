/// What one output asks of its encode where it differs from the recording's (`--vbitrate`,
/// `--size`, `--fps`, `--vcodec`, `--abitrate` before its `-o`, as in ffmpeg). Nil keeps the
/// recording's setting. Outputs that ask the same share one encode.
public struct OutputEncoding: Sendable, Equatable {
    public var videoCodec: VideoCodec?
    /// The frame size (both, or neither).
    public var width: Int?
    public var height: Int?
    public var fps: FrameRate?
    public var videoBitRate: Int?
    public var audioBitRate: Int?

    public init() {}

    /// Nothing asked: the output takes the recording's encode.
    public var isEmpty: Bool { self == OutputEncoding() }

    /// The recording's video settings with what this output asks for in their place.
    public func applied(to video: VideoSettings) -> VideoSettings {
        var v = video
        if let codec = videoCodec { v.codec = codec }
        if let width, let height { (v.width, v.height) = (width, height) }
        if let fps { v.fps = fps }
        if let rate = videoBitRate { v.bitRate = rate }
        return v
    }

    public func applied(to audio: AudioSettings) -> AudioSettings {
        var a = audio
        if let rate = audioBitRate { a.bitRate = rate }
        return a
    }
}
