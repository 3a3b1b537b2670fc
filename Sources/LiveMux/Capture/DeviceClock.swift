import FFmpeg

/// Puts a live device's own timestamps on the capture clock (monotonic µs).
///
/// libavdevice's pulse and alsa stamp a packet with the wall clock minus the device's latency, so
/// the stamp is when its first sample was captured, not when the packet reached us (up to a
/// fragment, plus scheduling, later); x11grab and v4l2 stamp the wall clock too (v4l2 converts
/// the driver's monotonic stamps). Which clock a device uses is told by its first stamp, from
/// whichever clock it is near; a device whose stamps are near neither is anchored at the arrival
/// of its first frame, as before. The wall clock's distance from the monotonic one is read at
/// every frame, so a stepped wall clock moves no frame.
struct DeviceClock {
    enum Source: String, Sendable {
        case wallClock = "wall clock", monotonic, arrival
    }
    private(set) var source: Source?
    private var arrivalOffset: Int64 = 0
    /// A stamp this far from a clock is not on it: no device buffers 10 s.
    static let plausibleDistance: Int64 = 10_000_000

    /// The capture-clock time of a frame the device stamped `stamp` (µs) that arrived at `arrival`.
    mutating func captureTime(stamp: Int64, arrival: Int64) -> Int64 {
        let wallToMonotonic = Timestamp.wallClockMicroseconds() - Timestamp.monotonicMicroseconds()
        if source == nil {
            let fromWall = abs(stamp - wallToMonotonic - arrival), fromMonotonic = abs(stamp - arrival)
            if fromWall < Self.plausibleDistance && fromWall <= fromMonotonic {
                source = .wallClock
            } else if fromMonotonic < Self.plausibleDistance {
                source = .monotonic
            } else {
                source = .arrival
                arrivalOffset = arrival - stamp
            }
        }
        switch source! {
        case .wallClock: return stamp - wallToMonotonic
        case .monotonic: return stamp
        case .arrival: return stamp + arrivalOffset
        }
    }
}
