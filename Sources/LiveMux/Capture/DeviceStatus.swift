import Foundation

/// What `--stats` reports about one live device: the clock its stamps are on and how long after
/// its stamp a frame reaches LiveMux (its buffering: a pulse fragment, a grab's lateness).
///
/// Locking: `lock` guards every field; the capture thread updates it, the stats timer reads it.
final class DeviceStatus: @unchecked Sendable {
    private let lock = NSLock()
    let name: String
    private var clock: DeviceClock.Source?
    /// Arrival − capture time (µs), smoothed over ~32 frames.
    private var delay: Double?
    private var failures = 0, reopenings = 0
    private var away = 0.0, filledSeconds = 0.0, filledFrames = 0

    init(name: String) { self.name = name }

    func observed(clock: DeviceClock.Source?, captured: Int64, arrived: Int64) {
        let d = Double(arrived - captured)
        lock.lock()
        self.clock = clock
        delay = delay.map { $0 + (d - $0) / 32 } ?? d
        lock.unlock()
    }

    /// It failed mid-recording (a read error, its end, its daemon gone).
    func failed() { locked { failures += 1 } }
    /// It was opened again after a failure.
    func reopened() { locked { reopenings += 1 } }
    /// Its first frame after a failure came `seconds` after the failure.
    func back(after seconds: Double) { locked { away += seconds } }
    /// Its gaps so far: seconds of silence and repeated video frames (totals).
    func filled(seconds: Double, frames: Int) { locked { (filledSeconds, filledFrames) = (seconds, frames) } }

    private func locked(_ body: () -> Void) {
        lock.lock()
        body()
        lock.unlock()
    }

    var snapshot: DeviceSnapshot {
        lock.lock()
        defer { lock.unlock() }
        return DeviceSnapshot(name: name, clock: clock?.rawValue ?? "none yet", delayMs: (delay ?? 0) / 1000,
                              failures: failures, reopenings: reopenings, awaySeconds: away,
                              audioFilledSeconds: filledSeconds, videoFilledFrames: filledFrames)
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
}
