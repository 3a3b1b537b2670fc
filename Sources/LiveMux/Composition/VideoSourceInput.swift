import FFmpeg
import POSIX

/// A video source composed over the first: its capture thread converts each frame to the size and
/// pixel format its graph input was made for, and keeps the newest; the compositor, on the video
/// encoder's thread, takes one for each output frame (`frame(at:)`). A source that stalls shows
/// its last frame; a device left out (away past `--device-timeout`) shows black, as before its
/// first frame, until it is back: a frozen picture would look live. Unpaced, the frames are kept
/// in order and the compositor takes the last one captured by its time, so a file or synthetic
/// source composes the same however fast it is read.
final class VideoSourceInput: FrameConsumer, @unchecked Sendable {
    /// `v1`, `v2` …: the source's label in graphs and stats.
    let label: String
    private let live: Bool
    /// The device's, when the source is one.
    private let device: DeviceStatus?
    /// The capture thread's: to the size its graph input takes.
    private let converter: PictureConverter
    var width: Int { converter.width }
    var height: Int { converter.height }
    private struct State {
        var frames: [(frame: Frame, time: Int64)] = []
        var ended = false
        var closed = false
        /// Whether its ending was said (once).
        var saidFrozen = false
    }
    private let state = Locked(State())
    /// Frames an unpaced source may run ahead of the compositor.
    static let aheadFrames = 4
    /// How long (µs) an ended source's last frame is shown before that is said: past any frame
    /// or two by which the sources' own stops at the recording's end differ, so a normal end
    /// says nothing.
    static let frozenNotice: Int64 = 500_000
    /// Where a warning goes: a file that ended in a picture-in-picture freezes there.
    private let report: @Sendable (String) -> Void

    init(label: String, width: Int, height: Int, live: Bool, device: DeviceStatus? = nil,
         report: @escaping @Sendable (String) -> Void = { _ in }) {
        (self.label, self.live, self.device, self.report) = (label, live, device, report)
        converter = PictureConverter(width: width, height: height)
    }

    var isDone: Bool { state.withLock { $0.closed } }

    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        let converted = try converter.convert(frame)
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

    /// The frame to show at capture time `time`: live, the newest; unpaced, the last one captured
    /// by then (waiting for the source to get there). Nil before its first frame and while its
    /// device is left out.
    func frame(at time: Int64) -> Frame? {
        if device?.isLeftOut == true { return nil }
        let reached = { [live] (s: State) in live || s.ended || s.closed || (s.frames.last.map { $0.time >= time } ?? false) }
        // A full queue wakes the compositor too: the frames it has passed are dropped, so a source
        // faster than the first makes room and goes on.
        let wake = { (s: State) in reached(s) || s.frames.count >= Self.aheadFrames }
        while true {
            let (frame, done, frozen) = state.withLock(waitingUntil: wake) { s, _ -> (Frame?, Bool, Bool) in
                while s.frames.count > 1, s.frames[1].time <= time { s.frames.removeFirst() }
                guard reached(s) else { return (nil, false, false) }
                guard let first = s.frames.first, live || first.time <= time else { return (nil, true, false) }
                let frozen = s.ended && !s.closed && !s.saidFrozen && time - first.time > Self.frozenNotice
                if frozen { s.saidFrozen = true }
                return (first.frame, true, frozen)
            }
            state.broadcast()
            if frozen { report("\(label) ended; its picture stays on its last frame while the recording goes on") }
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
