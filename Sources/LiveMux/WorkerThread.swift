import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// Every thread LiveMux starts: named (as `top -H`, gdb and /proc show it), with the stack libx264
/// and libavformat need, and joined by its owner — or detached, for one that may stay blocked in a
/// device read after its owner gave up on it (`DeviceReader`, `DeviceOpener`).
final class WorkerThread: Sendable {
    /// Foundation's default of 512 KiB is too small for libx264's and libavformat's frames.
    static let stackSize = 4 << 20
    /// Linux keeps 15 bytes of a thread's name.
    static let nameLength = 15

    private let handle: pthread_t
    /// Joined or detached: a pthread may be either only once. Held while joining, so a second
    /// `join` waits for the first.
    private let released = Locked(false)

    private init(_ handle: pthread_t) { self.handle = handle }

    /// What the new thread runs, handed over through pthread_create's one pointer.
    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) { (self.name, self.body) = (name, body) }
    }

    /// Starts `body` on a new thread called `name`. The caller joins it, or detaches it.
    static func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) -> WorkerThread {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        let start = Unmanaged.passRetained(Start(name, body)).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(&handle, &attributes, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            // Foundation names the pthread (pthread_setname_np is not in Swift's Glibc module).
            Thread.current.name = String(decoding: start.name.utf8.prefix(WorkerThread.nameLength), as: UTF8.self)
            start.body()
            return nil
        }, start)
        // Only out of memory or threads: nothing can go on without them.
        precondition(status == 0, "pthread_create failed for \(name): \(String(cString: strerror(status)))")
        return WorkerThread(handle)
    }

    /// Waits until the thread has returned.
    func join() {
        released.withLock { done in
            guard !done else { return }
            done = true
            pthread_join(handle, nil)
        }
    }

    /// Lets the thread end on its own, whenever that is; its resources go with it.
    func detach() {
        released.withLock { done in
            guard !done else { return }
            done = true
            pthread_detach(handle)
        }
    }

    // A thread nobody joined is detached, so its resources are not held for ever.
    deinit { detach() }
}
