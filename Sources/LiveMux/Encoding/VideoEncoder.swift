import FFmpeg
import POSIX

/// Turns captured video frames into encoded packets on the shared timeline: places each frame on
/// the recording's frame grid, converts it with libswscale once per size its lanes encode at, and
/// hands it to each lane (an encode and the mux sessions it feeds: one per distinct codec, size,
/// rate and bit rate the outputs ask for, and one apart for an adapting URL output; `EncodePlan`).
/// Runs on the video encoder's thread.
final class VideoEncoder: FrameConsumer, @unchecked Sendable {
    // Used by one thread only.
    /// The recording's size and rate (the frame grid is 1/fps); a lane may encode another.
    let format: VideoFormat
    private var lanes: [VideoLane]
    /// Lanes added while the job runs (the control API's new outputs), taken at the next frame.
    private let added = Locked([VideoLane]())
    private let timeline: Timeline
    private let statistics: Statistics
    /// The dashboard's snapshot takes a frame from here when it wants one.
    private let frames: FrameTap?
    private let scaler = PictureScaler()
    private let frameLimit: Int64?
    private var lastPTS: Int64 = -1
    private var lastCorrection: Int64 = 0
    private var lastInputTime: Int64?
    private(set) var isDone = false
    /// Where file outputs are cut: a keyframe is forced at each cut asked for and, with
    /// `--segment-at-clock`, at the first frame of each wall-clock period.
    private let segments: SegmentPlan?
    private var servedCuts = 0
    private var lastClockPeriod: Int64?

    init(format: VideoFormat, lanes: [VideoLane], timeline: Timeline, statistics: Statistics, duration: Double?,
         segments: SegmentPlan? = nil, frames: FrameTap? = nil) {
        self.format = format
        self.segments = segments
        self.frames = frames
        self.lanes = lanes
        self.timeline = timeline
        self.statistics = statistics
        // A duration shorter than a frame still records the first frame.
        frameLimit = duration.map { max(1, format.fps.frames(in: $0)) }
    }

    /// Encodes one frame captured at `time` (µs on the capture clock). Returns false once the
    /// duration is reached.
    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
        guard !isDone else { return false }
        // A timestamp that repeats or goes backwards: the frame cannot be placed, so it is dropped.
        if let last = lastInputTime, time <= last {
            statistics.countInput(.video)
            statistics.countTimestampRepair(.video)
            statistics.countDropped(.video)
            return true
        }
        lastInputTime = time
        let base = timeline.videoSetsBase ? timeline.establish(at: time) : (timeline.origin ?? time)
        // Audio is the master clock: follow its drift (whole frames; see ClockDrift).
        let correction = timeline.drift.videoCorrection(frameDuration: 1_000_000 / format.fps.framesPerSecond)
        let steppedForward = correction > lastCorrection
        lastCorrection = correction
        // The frame's slot on the output grid (1/fps), rounded to the nearest.
        let pts = Timestamp.rescale(time - base + correction, from: .microseconds, to: format.fps.frameDuration)
        // The frame past the duration ends the stream; it is not part of it, so not counted in.
        if let limit = frameLimit, pts >= limit {
            isDone = true
            return false
        }
        statistics.countInput(.video, placedAt: Double(Timestamp.rescale(pts, from: format.fps.frameDuration, to: .microseconds)) / 1e6)
        if pts < 0 || pts <= lastPTS {
            statistics.countDropped(.video)  // before the start, or a second frame for one slot
            return true
        }
        // A drift correction forward leaves a slot empty: this frame fills it too.
        let firstSlot = steppedForward && lastPTS >= 0 && pts - lastPTS == 2 ? lastPTS + 1 : pts
        lastPTS = pts
        lanes += added.withLock { a in
            defer { a = [] }
            return a
        }
        // Each size once, from the frame as captured.
        var pictures: [(width: Int, height: Int, frame: Frame)] = []
        let inputs = try lanes.map { lane in
            let (w, h) = (lane.format.width, lane.format.height)
            if let p = pictures.first(where: { $0.width == w && $0.height == h }) { return p.frame }
            let picture = try scaler.picture(of: frame, width: w, height: h)
            pictures.append((w, h, picture))
            return picture
        }
        if let first = inputs.first { frames?.offer(first) }
        lanes.forEach { $0.followBitRate() }
        for slot in firstSlot...pts {
            if slot < pts { statistics.countDuplicated(.video) }
            let keyframe = forcesKeyframe(at: slot)
            for (lane, input) in zip(lanes, inputs) {
                try lane.encode(input, slot: slot, of: format.fps, capturedAt: wallTime, keyframe: keyframe)
            }
        }
        // Every lane's mux queue was cancelled: nothing more is wanted.
        if lanes.allSatisfy(\.isDone) { isDone = true }
        return !isDone
    }

    /// Adds a lane from any thread: it gets frames from the next one on (its first is a keyframe).
    func add(_ lane: VideoLane) { added.withLock { $0.append(lane) } }

    /// Whether the frame at grid slot `pts` must be a keyframe for a segment's cut: the mux thread
    /// cuts at the first keyframe after a request, or in a new clock period, which is this frame.
    private func forcesKeyframe(at pts: Int64) -> Bool {
        guard let segments else { return false }
        let requests = segments.cutRequests
        let period = segments.clockPeriod(atMedia: Timestamp.rescale(pts, from: format.fps.frameDuration, to: .microseconds))
        defer { (servedCuts, lastClockPeriod) = (requests, period) }
        if requests > servedCuts { return true }
        if let period, let last = lastClockPeriod, period > last { return true }
        return false
    }

    /// Flushes the encoders and ends the stream.
    func finish() throws {
        isDone = true
        lanes += added.withLock { a in
            defer { a = [] }
            return a
        }
        for lane in lanes { try lane.finish() }
    }
}
