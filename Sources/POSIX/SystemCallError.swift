#if canImport(Glibc)
import Glibc
#endif

/// A system call failed: its name and the errno it set, read the moment it returned (before any
/// other code could change it).
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    /// The C function, as the call site names it (a literal, so a call costs no allocation).
    public let call: StaticString
    public let errno: Int32

    public init(call: StaticString, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's text for the errno ("Address already in use").
    public var message: String { String(cString: strerror(errno)) }

    public var description: String { "\(call): \(message)" }
}
