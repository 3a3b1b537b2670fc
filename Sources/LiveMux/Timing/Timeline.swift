import FFmpeg
import POSIX

/// The one timeline both streams share: time zero is the first video frame (a keyframe, the
/// encoder's first output) or, without video, the first audio sample. Times are microseconds on
/// the capture clock (see `CaptureSource`).
///
/// Inputs on one capture clock (live ones and those beside them) must each have delivered a frame
/// before the timeline starts, as ffmpeg opens and reads every input before it starts: a pulse
/// source's first packet can come up to 2 s after it was opened (a null sink's monitor), and a
/// screen that set zero meanwhile left the start of the recording without audio.
///
/// The base and the start-of-recording bookkeeping live in `state`; waiting for the base uses
/// its condition.
final class Timeline: Sendable {
    private struct State {
        var base: Int64?
        /// Inputs expected (`expectInput`) that have not delivered a frame yet.
        var unstarted = 0
        /// The latest first frame of the inputs that have (µs on the capture clock).
        var latestStart = Int64.min
        /// Whether a frame that may set the base has been let through (`admits`).
        var open = false
    }
    private let state = Locked(State())
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
    var origin: Int64? { state.withLock { $0.base } }

    /// Sets the base from the stream that owns it (first call wins) and returns it.
    func establish(at time: Int64) -> Int64 {
        let (base, set) = state.withLock { s in
            if let base = s.base { return (base, false) }
            s.base = time
            return (time, true)
        }
        if set { state.broadcast() }
        return base
    }

    /// One more input must deliver a frame before the timeline starts (before any starts).
    func expectInput() {
        state.withLock { $0.unstarted += 1 }
    }

    /// An expected input delivered its first frame, captured at `time` (µs), or will deliver none
    /// (it ended or failed first: `time` is then when).
    func inputStarted(at time: Int64) {
        state.withLock { s in
            s.unstarted -= 1
            s.latestStart = max(s.latestStart, time)
        }
    }

    /// Whether a frame of `kind` captured at `time` goes on to its encoder: always, unless it is
    /// of the stream that sets the base and comes before every expected input has delivered a
    /// frame, or before the first frame of one of them. Such a frame is dropped, and so zero
    /// comes after the first sample of every input: audio covers the recording from its start.
    func admits(_ kind: StreamKind, at time: Int64) -> Bool {
        guard kind == (videoSetsBase ? .video : .audio) else { return true }
        return state.withLock { s in
            if !s.open && s.unstarted == 0 && time >= s.latestStart { s.open = true }
            return s.open
        }
    }

    /// Waits up to `seconds` for the base to be set; returns it, or nil on timeout.
    func waitForOrigin(upTo seconds: Double) -> Int64? {
        let deadline = Timestamp.monotonicMicroseconds() + Int64(seconds * 1_000_000)
        return state.withLock(waitingUntil: { $0.base != nil }, deadline: deadline) { s, _ in s.base }
    }
}
