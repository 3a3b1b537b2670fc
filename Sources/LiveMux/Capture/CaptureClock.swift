import Foundation
import FFmpeg

/// Puts one source's frames on the capture clock (monotonic µs) and paces them. A live device's
/// frames keep the times it stamped them with (`DeviceClock`, then its `FrameGrid` for video);
/// another input beside a live one is anchored at its first frame's arrival; otherwise every
/// input starts at zero. Used by the source's capture thread only.
struct CaptureClock {
    let isLive: Bool
    /// Frames are delivered on the capture clock (real time asked for, or another input is live).
    private(set) var paced: Bool
    private(set) var anchorToArrival = false
    /// Anchored on arrival: the monotonic time that capture time 0 stands for (0 on the wall
    /// clock; a running job's start for a source added to it).
    private var arrivalOrigin: Int64 = 0
    private var offset: Int64?
    private var deviceClock = DeviceClock()
    /// A live video device's frame grid; nil for everything else.
    private var frameGrid: FrameGrid?
    /// The monotonic time of capture time 0, set by the first frame paced. Optional: on the
    /// wall clock (anchored on arrival) it is 0 itself, which as a "not yet" mark was taken again
    /// at the second frame, one frame early, and every frame was let go a frame before its time.
    private var paceStart: Int64?
    private var lastTime: [StreamKind: Int64] = [:]
    private let deviceStatus: DeviceStatus?

    init(isLive: Bool, realtime: Bool, frameGrid: FrameGrid?, deviceStatus: DeviceStatus?) {
        self.isLive = isLive
        paced = realtime && !isLive
        self.frameGrid = frameGrid
        self.deviceStatus = deviceStatus
    }

    /// Puts this input on the wall clock because another input is live.
    mutating func shareWithLiveInput() { join(origin: 0) }

    /// Puts an input that is not live on a running job's clock, whose capture time 0 was the
    /// monotonic time `origin`: its first frame is placed at the instant it arrives.
    mutating func join(origin: Int64) {
        anchorToArrival = true
        arrivalOrigin = origin
        paced = !isLive
    }

    /// The monotonic time capture time 0 stands for, once the first frame was paced; nil before,
    /// and for a live device (its times are the monotonic clock's).
    var origin: Int64? { paceStart }

    /// A reopened device stamps afresh, on its own grid.
    mutating func deviceReopened(grid: FrameGrid?) {
        deviceClock = DeviceClock()
        frameGrid = grid
    }

    /// The capture time of a frame that arrived at `now`.
    mutating func time(of frame: Frame, _ kind: StreamKind, in timeBase: Rational, now: Int64) -> Int64 {
        var raw = frame.bestEffortTimestamp
        if raw == Timestamp.none { raw = frame.pts }
        var time: Int64
        if raw == Timestamp.none {
            time = (lastTime[kind] ?? 0) + 1
        } else {
            let t = Timestamp.rescale(raw, from: timeBase, to: .microseconds)
            if isLive {
                time = deviceClock.captureTime(stamp: t, arrival: now)
                deviceStatus?.observed(clock: deviceClock.source, captured: time, arrived: now)
                if kind == .video, frameGrid != nil { time = frameGrid!.place(time) }
            } else {
                if offset == nil { offset = anchorToArrival ? now - arrivalOrigin - t : -t }
                time = t + offset!
            }
        }
        lastTime[kind] = time
        return time
    }

    /// When the frame at `time` counts as captured, after waiting until it is due when paced;
    /// nil when a stop came while waiting. A device's frame was captured when it says (latency
    /// counts from there), never later than it arrived.
    mutating func pace(_ time: Int64, now: Int64, stop: StopSignal) -> Int64? {
        var captured = isLive ? min(time, now) : now
        if paced {
            let start = paceStart ?? now - time
            paceStart = start
            let due = start + time
            if due > now {
                guard stop.sleep(untilMonotonic: due) else { return nil }
                captured = due
            }
        }
        return captured
    }
}
