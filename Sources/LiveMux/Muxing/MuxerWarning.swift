import Foundation
import FFmpeg

/// Something a `Muxer` dropped or skipped instead of failing; each is counted.
public enum MuxerWarning: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A video packet before any parameter set: nothing could decode it.
    case videoBeforeParameterSets
    /// A video packet before the first keyframe: nothing could decode it.
    case videoBeforeKeyframe
    /// A video packet that is neither Annex B nor length-prefixed, or whose NAL units do not parse.
    case unreadableVideo
    /// An audio packet that is neither a valid ADTS frame nor usable as a raw frame.
    case unreadableAudio
    /// A packet whose decoding timestamp was not after its stream's previous one, or negative.
    case timestampNotIncreasing
    /// An audio packet whose rate or channel count differs from the stream's.
    case audioParametersChanged

    /// What was dropped, for a warning line.
    public var description: String {
        switch self {
        case .videoBeforeParameterSets: return "video packets before any parameter set (SPS/PPS) were dropped"
        case .videoBeforeKeyframe: return "video packets before the first keyframe were dropped"
        case .unreadableVideo: return "unreadable video packets (no start code, bad NAL lengths) were dropped"
        case .unreadableAudio: return "unreadable audio packets (bad ADTS header or length) were dropped"
        case .timestampNotIncreasing: return "packets whose timestamp did not increase were dropped"
        case .audioParametersChanged: return "audio packets with another sample rate or channel count were dropped"
        }
    }
}
