import POSIX

/// What `--stats` reports about one live device: the clock its stamps are on and how long after
/// its stamp a frame reaches LiveMux (its buffering: a pulse fragment, a grab's lateness).
///
/// The capture thread updates it, the stats timer reads it.
final class DeviceStatus: Sendable {
    let name: String
    private struct State {
        var clock: DeviceClock.Source?
        /// Arrival − capture time (µs), smoothed over ~32 frames.
        var delay: Double?
        var failures = 0, reopenings = 0
        var away = 0.0, filledSeconds = 0.0, filledFrames = 0
        /// Failed and not back yet; and past the timeout (a source after the first of its kind).
        var isAway = false, isLeftOut = false
    }
    private let state = Locked(State())

    init(name: String) { self.name = name }

    func observed(clock: DeviceClock.Source?, captured: Int64, arrived: Int64) {
        let d = Double(arrived - captured)
        state.withLock { s in
            s.clock = clock
            s.delay = s.delay.map { $0 + (d - $0) / 32 } ?? d
        }
    }

    /// It failed mid-recording (a read error, its end, its daemon gone).
    func failed() {
        state.withLock { s in
            s.failures += 1
            s.isAway = true
        }
    }
    /// It stayed away past the timeout and the recording goes on without it.
    func leftOut() { state.withLock { $0.isLeftOut = true } }
    var isLeftOut: Bool { state.withLock { $0.isLeftOut } }
    /// It was opened again after a failure.
    func reopened() { state.withLock { $0.reopenings += 1 } }
    /// Its first frame after a failure came `seconds` after the failure.
    func back(after seconds: Double) {
        state.withLock { s in
            s.away += seconds
            (s.isAway, s.isLeftOut) = (false, false)
        }
    }

    /// Its gaps so far: seconds of silence and repeated video frames (totals).
    func filled(seconds: Double, frames: Int) { state.withLock { ($0.filledSeconds, $0.filledFrames) = (seconds, frames) } }

    var snapshot: DeviceSnapshot {
        state.withLock { s in
            DeviceSnapshot(name: name, clock: s.clock?.rawValue ?? "none yet", delayMs: (s.delay ?? 0) / 1000,
                           failures: s.failures, reopenings: s.reopenings, awaySeconds: s.away,
                           audioFilledSeconds: s.filledSeconds, videoFilledFrames: s.filledFrames,
                           state: s.isLeftOut ? .leftOut : s.isAway ? .reopening : .live)
        }
    }
}

/// One device in a `StatisticsSnapshot`.
public struct DeviceSnapshot: Sendable, Equatable {
    /// The device as given (`pulse:default`, `x11grab::0`).
    public var name: String
    /// Which clock its stamps are on: "wall clock", "monotonic", or "arrival" (stamps near neither).
    public var clock: String
    /// How long after its stamp a frame arrives (ms, smoothed).
    public var delayMs: Double
    /// Times it failed mid-recording, and was opened again.
    public var failures = 0, reopenings = 0
    /// Seconds from its failures to its first frames after them (total).
    public var awaySeconds = 0.0
    /// Seconds of silence and repeated video frames that filled its gaps.
    public var audioFilledSeconds = 0.0, videoFilledFrames = 0
    /// Live, reopening while it is away (its last frame or silence recorded in its place), or
    /// left out: a source after the first of its kind that stayed away past --device-timeout.
    public var state = SourceState.live
}
