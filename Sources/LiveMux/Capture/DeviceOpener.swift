import Foundation
import FFmpeg

/// One attempt to open a device again, on a thread of its own: libavdevice's pulse waits for its
/// daemon without consulting the interrupt callback, and a daemon that is half started can keep
/// it waiting for ever, so the capture thread only looks at the result while it goes on filling.
/// An attempt nobody waits for any more ends with its thread; what it opened is then closed.
/// Locking: `lock` guards `outcome`.
final class DeviceOpener: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<InputDevice, Error>?

    init(open: @escaping @Sendable () throws -> InputDevice) {
        let thread = Thread { [self] in
            let result = Result { try open() }
            lock.lock()
            outcome = result
            lock.unlock()
        }
        thread.name = "livemux-reopen"
        thread.start()
    }

    /// The device, or why it could not be opened; nil while the attempt is still going on.
    var result: Result<InputDevice, Error>? {
        lock.lock()
        defer { lock.unlock() }
        return outcome
    }
}
