import Foundation
import FFmpeg

/// The audio stream a `Muxer` is given: AAC, raw or ADTS.
public struct AudioStreamDescription: Sendable, Equatable {
    /// The codec (AAC).
    public var codec: AudioCodec
    /// Sample rate in Hz; for ADTS input the headers' rate wins.
    public var sampleRate: Int
    /// Channel count; for ADTS input the headers' configuration wins.
    public var channels: Int
    /// The AudioSpecificConfig. Nil: built from `sampleRate` and `channels` for raw frames, or
    /// derived from the first ADTS header.
    public var extradata: [UInt8]?

    /// Describes an AAC stream.
    public init(codec: AudioCodec = .aac, sampleRate: Int, channels: Int, extradata: [UInt8]? = nil) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.extradata = extradata
    }
}
