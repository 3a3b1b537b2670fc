import FFmpeg
import POSIX

/// One attempt to open a device (or a source), on a thread of its own: libavdevice's pulse waits
/// for its daemon without consulting the interrupt callback, and a daemon that is half started can
/// keep it waiting for ever, so whoever asked only looks at the result (a capture thread while it
/// goes on filling, the control API for at most `--device-timeout`). An attempt nobody waits for
/// any more ends with its thread; what it opened is then closed.
final class DeviceOpener<Device: Sendable>: Sendable {
    private let outcome = Locked<(result: Result<Device, Error>?, abandoned: Bool)>((nil, false))

    private init() {}

    /// Starts one attempt on a thread called `name`, detached: nobody may wait for it to end.
    static func start(_ name: String, open: @escaping @Sendable () throws -> Device) -> DeviceOpener {
        let opener = DeviceOpener()
        WorkerThread.spawn(name) {
            let result = Result { try open() }
            opener.outcome.withLock { $0.result = result }
            opener.outcome.broadcast()
        }.detach()
        return opener
    }

    /// The device, or why it could not be opened; nil while the attempt is still going on.
    var result: Result<Device, Error>? { outcome.withLock { $0.result } }

    /// Waits until the attempt ended, `abandon` was called, or the monotonic clock reaches
    /// `deadline` (µs); the result, nil when the attempt has not ended.
    func wait(until deadline: Int64) -> Result<Device, Error>? {
        outcome.withLock(waitingUntil: { $0.result != nil || $0.abandoned }, deadline: deadline) { o, _ in o.result }
    }

    /// Wakes whoever waits: nobody wants the device any more (the job is stopping).
    func abandon() {
        outcome.withLock { $0.abandoned = true }
        outcome.broadcast()
    }
}
