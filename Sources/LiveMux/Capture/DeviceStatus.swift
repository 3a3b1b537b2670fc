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

    init(name: String) { self.name = name }

    func observed(clock: DeviceClock.Source?, captured: Int64, arrived: Int64) {
        let d = Double(arrived - captured)
        lock.lock()
        self.clock = clock
        delay = delay.map { $0 + (d - $0) / 32 } ?? d
        lock.unlock()
    }

    var snapshot: DeviceSnapshot {
        lock.lock()
        defer { lock.unlock() }
        return DeviceSnapshot(name: name, clock: clock?.rawValue ?? "none yet", delayMs: (delay ?? 0) / 1000)
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
}
