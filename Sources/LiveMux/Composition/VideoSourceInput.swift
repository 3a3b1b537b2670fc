import FFmpeg
import POSIX

/// A video source composed over the first: its capture thread converts each frame to the size and
/// pixel format its graph input was made for, and keeps the newest; the compositor, on the video
/// encoder's thread, takes one for each output frame (`frame(at:)`). A source that stalls shows
/// its last frame. Unpaced, the frames are kept in order and the compositor takes the last one
/// captured by its time, so a file or synthetic source composes the same however fast it is read.
final class VideoSourceInput: FrameConsumer, @unchecked Sendable {
    /// `v1`, `v2` …: the source's label in graphs and stats.
    let label: String
    let width: Int, height: Int
    private let live: Bool
    /// The capture thread's converter.
    private var scaler: Scaler?
    private struct State {
        var frames: [(frame: Frame, time: Int64)] = []
        var ended = false
        var closed = false
    }
    private let state = Locked(State())
    /// Frames an unpaced source may run ahead of the compositor.
    static let aheadFrames = 4

    init(label: String, width: Int, height: Int, live: Bool) {
        (self.label, self.width, self.height, self.live) = (label, width, height, live)
    }

    var isDone: Bool { state.withLock { $0.closed } }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        let converted = try convert(frame)
        let hasRoom = { [live] (s: State) in live || s.frames.count < Self.aheadFrames || s.closed }
        let open = state.withLock(waitingUntil: hasRoom) { s, _ -> Bool in
            if s.closed { return false }
            if live { s.frames = [] }
            s.frames.append((converted, time))
            return true
        }
        state.broadcast()
        return open
    }

    private func convert(_ frame: Frame) throws -> Frame {
        if frame.width == width, frame.height == height, frame.format == PixelFormat.yuv420p.rawValue { return try frame.reference() }
        if scaler == nil || !scaler!.accepts(frame) {
            scaler = try Scaler(fromWidth: frame.width, height: frame.height, format: frame.format,
                                toWidth: width, height: height, format: .yuv420p)
        }
        return try scaler!.scale(frame)
    }

    /// The frame to show at capture time `time`: live, the newest; unpaced, the last one captured
    /// by then (waiting for the source to get there). Nil before its first frame.
    func frame(at time: Int64) -> Frame? {
        let reached = { [live] (s: State) in live || s.ended || s.closed || (s.frames.last.map { $0.time >= time } ?? false) }
        // A full queue wakes the compositor too: the frames it has passed are dropped, so a source
        // faster than the first makes room and goes on.
        let wake = { (s: State) in reached(s) || s.frames.count >= Self.aheadFrames }
        while true {
            let (frame, done) = state.withLock(waitingUntil: wake) { s, _ -> (Frame?, Bool) in
                while s.frames.count > 1, s.frames[1].time <= time { s.frames.removeFirst() }
                guard reached(s) else { return (nil, false) }
                guard let first = s.frames.first, live || first.time <= time else { return (nil, true) }
                return (first.frame, true)
            }
            state.broadcast()
            if done { return frame }
        }
    }

    /// The composition is over: a source waiting for room stops.
    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
    }

    func finish() throws {
        state.withLock { $0.ended = true }
        state.broadcast()
    }
}
