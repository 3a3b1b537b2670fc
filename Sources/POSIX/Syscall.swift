#if canImport(Glibc)
import Glibc
#endif

// Every system call goes through one of these, so EINTR is retried and errno read in one place:
// at once, before anything else runs (a `String`, a lock or a release could change it).
// `@inlinable` and `@inline(__always)`: a call specializes to the plain C call and a compare, with
// no allocation (the name is a `StaticString`), on the mux thread's per-packet writes too.

/// Runs `body`, a C call that returns -1 and sets errno when it fails; retries it while it is
/// interrupted by a signal (EINTR); its result, or a `SystemCallError` naming `call`.
@inlinable @inline(__always) @discardableResult
public func syscall<T: FixedWidthInteger & SignedInteger>(where call: StaticString,
                                                         _ body: () -> T) throws(SystemCallError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code != EINTR { throw SystemCallError(call: call, errno: code) }
    }
}

/// `syscall` on a non-blocking descriptor: EAGAIN is `.wouldBlock`, other failures `.failed`.
@inlinable @inline(__always)
public func nonBlockingSyscall<T: FixedWidthInteger & SignedInteger>(where call: StaticString,
                                                                    _ body: () -> T) -> NonBlockingResult<T> {
    do throws(SystemCallError) {
        return .done(try syscall(where: call, body))
    } catch {
        return error.errno == EAGAIN || error.errno == EWOULDBLOCK ? .wouldBlock : .failed(error)
    }
}

/// Closes a descriptor, once: Linux has closed it even when `close` reports EINTR, so that is no
/// failure, and a retry could close a descriptor another thread has just been given.
@inlinable
public func closeDescriptor(_ fd: Int32) throws(SystemCallError) {
    if close(fd) == 0 { return }
    let code = errno
    if code != EINTR { throw SystemCallError(call: "close", errno: code) }
}
