import Foundation
import FFmpeg

/// What `livemux mux` needs: where the encoded streams come from and where they go.
public struct MuxConfiguration: Sendable {
    /// One file whose first video and first audio stream are taken as they are.
    public var input: String?
    /// A video file: an H.264/HEVC elementary stream (`.h264`, `.264`, `.h265`, `.hevc`) or any container.
    public var video: String?
    /// An audio file: ADTS (`.aac`) or any container with AAC.
    public var audio: String?
    /// Frame rate of elementary video streams, which carry no timestamps. Nil: the rate their
    /// parameter sets state (SPS/VPS timing info), else 25 (as FFmpeg's) with a warning.
    public var fps: FrameRate?
    /// Whether to succeed although more than 1% of a stream's packets were dropped.
    public var allowDrops = false
    /// Pace the packets at their own timestamps, as a live source would be (`ffmpeg -re`): what a
    /// network output or live viewers need.
    public var realtime = false
    /// Where it goes: files, stdout, URLs, HTTP viewers.
    public var outputs = Outputs()

    /// An empty configuration; set an input and an output.
    public init() {}
}
