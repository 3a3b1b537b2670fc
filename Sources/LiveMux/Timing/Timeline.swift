import Foundation

/// The one timeline both streams share: time zero is the first video frame (a keyframe, the
/// encoder's first output) or, without video, the first audio sample. Times are microseconds on
/// the capture clock (see `CaptureSource`).
///
/// Locking: `lock` guards `base`; waiting for it uses the same condition.
final class Timeline: @unchecked Sendable {
    private let lock = NSCondition()
    private var base: Int64?
    /// Whether the video stream sets the base; if not, audio does.
    let videoSetsBase: Bool
    /// How far the audio clock has moved from the capture clock; video follows it (audio is master).
    let drift = ClockDrift()

    /// Whether audio and video come from different capture threads, so the audio thread may wait
    /// for video to set the base (with one input, one thread feeds both and must never wait).
    let separateThreads: Bool

    init(videoSetsBase: Bool, separateThreads: Bool = false) {
        self.videoSetsBase = videoSetsBase
        self.separateThreads = separateThreads
    }

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
        if base == nil {
            base = time
            lock.broadcast()
        }
        return base!
    }

    /// Waits up to `seconds` for the base to be set; returns it, or nil on timeout.
    func waitForOrigin(upTo seconds: Double) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date().addingTimeInterval(seconds)
        while base == nil && lock.wait(until: deadline) {}
        return base
    }
}
