import Foundation

/// The one timeline both streams share: time zero is the first video frame (a keyframe, the
/// encoder's first output) or, without video, the first audio sample. Times are microseconds on
/// the capture clock (see `CaptureSource`).
///
/// Locking: `lock` guards `base`.
final class Timeline: @unchecked Sendable {
    private let lock = NSLock()
    private var base: Int64?
    /// Whether the video stream sets the base; if not, audio does.
    let videoSetsBase: Bool
    /// How far the audio clock has moved from the capture clock; video follows it (audio is master).
    let drift = ClockDrift()

    init(videoSetsBase: Bool) { self.videoSetsBase = videoSetsBase }

    /// The base, if known.
    var origin: Int64? {
        lock.lock()
        defer { lock.unlock() }
        return base
    }

    /// Sets the base from the stream that owns it (first call wins) and returns it.
    func establish(at time: Int64) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        if base == nil { base = time }
        return base!
    }
}
