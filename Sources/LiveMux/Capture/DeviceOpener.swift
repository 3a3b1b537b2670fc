import FFmpeg
import POSIX

/// One attempt to open a device again, on a thread of its own: libavdevice's pulse waits for its
/// daemon without consulting the interrupt callback, and a daemon that is half started can keep
/// it waiting for ever, so the capture thread only looks at the result while it goes on filling.
/// An attempt nobody waits for any more ends with its thread; what it opened is then closed.
final class DeviceOpener: Sendable {
    private let outcome = Locked<Result<InputDevice, Error>?>(nil)

    private init() {}

    /// Starts one attempt on a thread of its own, detached: nobody may wait for it to end.
    static func start(open: @escaping @Sendable () throws -> InputDevice) -> DeviceOpener {
        let opener = DeviceOpener()
        WorkerThread.spawn("livemux-reopen") {
            let result = Result { try open() }
            opener.outcome.withLock { $0 = result }
        }.detach()
        return opener
    }

    /// The device, or why it could not be opened; nil while the attempt is still going on.
    var result: Result<InputDevice, Error>? { outcome.withLock { $0 } }
}
