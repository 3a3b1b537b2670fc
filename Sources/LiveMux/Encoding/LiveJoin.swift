import POSIX

/// Where a session added while the job runs begins: its video at the next keyframe of its
/// encode, its audio at the first packet from that keyframe's time on, so the new file or push
/// starts with a picture and no audio before it. Shared by its video and audio tees.
final class LiveJoin: Sendable {
    /// The keyframe's time (µs of media); nil before it came. Without video, audio starts at once.
    private let start: Locked<Int64?>

    init(hasVideo: Bool) { start = Locked(hasVideo ? nil : .min) }

    /// Whether a packet of `stream` at `time` (µs of media) is the session's first or later.
    func admits(_ stream: StreamKind, keyframe: Bool, at time: Int64) -> Bool {
        start.withLock { s in
            if stream == .video {
                if s == nil && keyframe { s = time }
                return s != nil
            }
            guard let s else { return false }
            return time >= s
        }
    }
}
