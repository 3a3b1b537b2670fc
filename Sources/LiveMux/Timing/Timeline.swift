import Foundation

/// The one timeline both streams share: time zero is the first video frame (a keyframe, the
/// encoder's first output) or, without video, the first audio sample. Times are microseconds on
/// the capture clock (see `CaptureSource`).
///
/// Inputs on one capture clock (live ones and those beside them) must each have delivered a frame
/// before the timeline starts, as ffmpeg opens and reads every input before it starts: a pulse
/// source's first packet can come up to 2 s after it was opened (a null sink's monitor), and a
/// screen that set zero meanwhile left the start of the recording without audio.
///
/// Locking: `lock` guards `base`, `unstarted`, `latestStart` and `open`; waiting for the base
/// uses the same condition.
final class Timeline: @unchecked Sendable {
    private let lock = NSCondition()
    private var base: Int64?
    /// Inputs expected (`expectInput`) that have not delivered a frame yet.
    private var unstarted = 0
    /// The latest first frame of the inputs that have (µs on the capture clock).
    private var latestStart = Int64.min
    /// Whether a frame that may set the base has been let through (`admits`).
    private var open = false
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

    /// One more input must deliver a frame before the timeline starts (before any starts).
    func expectInput() {
        lock.lock()
        unstarted += 1
        lock.unlock()
    }

    /// An expected input delivered its first frame, captured at `time` (µs), or will deliver none
    /// (it ended or failed first: `time` is then when).
    func inputStarted(at time: Int64) {
        lock.lock()
        unstarted -= 1
        latestStart = max(latestStart, time)
        lock.unlock()
    }

    /// Whether a frame of `kind` captured at `time` goes on to its encoder: always, unless it is
    /// of the stream that sets the base and comes before every expected input has delivered a
    /// frame, or before the first frame of one of them. Such a frame is dropped, and so zero
    /// comes after the first sample of every input: audio covers the recording from its start.
    func admits(_ kind: StreamKind, at time: Int64) -> Bool {
        guard kind == (videoSetsBase ? .video : .audio) else { return true }
        lock.lock()
        defer { lock.unlock() }
        if !open && unstarted == 0 && time >= latestStart { open = true }
        return open
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
