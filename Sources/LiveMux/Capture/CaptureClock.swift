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
    private var offset: Int64?
    private var deviceClock = DeviceClock()
    /// A live video device's frame grid; nil for everything else.
    private var frameGrid: FrameGrid?
    private var paceStart: Int64 = 0
    private var lastTime: [StreamKind: Int64] = [:]
    private let deviceStatus: DeviceStatus?

    init(isLive: Bool, realtime: Bool, frameGrid: FrameGrid?, deviceStatus: DeviceStatus?) {
        self.isLive = isLive
        paced = realtime && !isLive
        self.frameGrid = frameGrid
        self.deviceStatus = deviceStatus
    }

    /// Puts this input on the wall clock because another input is live.
    mutating func shareWithLiveInput() {
        anchorToArrival = true
        paced = !isLive
    }

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
                if offset == nil { offset = anchorToArrival ? now - t : -t }
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
            if paceStart == 0 { paceStart = now - time }
            let due = paceStart + time
            if due > now {
                guard stop.sleep(untilMonotonic: due) else { return nil }
                captured = due
            }
        }
        return captured
    }
}
