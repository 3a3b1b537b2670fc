import CFFmpeg

/// What kind of media a stream carries.
public enum MediaType: Sendable, Equatable {
    case video, audio, other

    init(_ t: AVMediaType) {
        switch t {
        case AVMEDIA_TYPE_VIDEO: self = .video
        case AVMEDIA_TYPE_AUDIO: self = .audio
        default: self = .other
        }
    }
}
