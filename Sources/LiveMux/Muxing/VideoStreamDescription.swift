import Foundation
import FFmpeg

/// The video stream a `Muxer` is given.
public struct VideoStreamDescription: Sendable, Equatable {
    /// H.264 or HEVC.
    public var codec: VideoCodec
    /// Frame size; nil to read it from the parameter sets.
    public var width: Int?
    /// Frame size; nil to read it from the parameter sets.
    public var height: Int?
    /// Parameter sets: Annex B NAL units, or an avcC/hvcC record. Nil when they come later, as an
    /// extradata packet or in-band before the first keyframe.
    public var extradata: [UInt8]?

    /// Describes a video stream; only the codec is required.
    public init(codec: VideoCodec, width: Int? = nil, height: Int? = nil, extradata: [UInt8]? = nil) {
        self.codec = codec
        self.width = width
        self.height = height
        self.extradata = extradata
    }
}
