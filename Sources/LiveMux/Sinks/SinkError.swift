#if canImport(Glibc)
import Glibc
#endif

/// A write to an output failed.
public struct SinkError: Error, CustomStringConvertible, Sendable {
    public let errno: Int32
    public let name: String
    /// The reader went away (closed pipe or socket): not a fault of the recording.
    public var isClosedByReader: Bool { errno == EPIPE || errno == ECONNRESET }
    /// The disk (or the user's quota) is full: freeing space lets the write go on.
    var isOutOfSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    public var description: String {
        if isClosedByReader { return "\(name) was closed by its reader" }
        if errno == ENOSPC { return "cannot write to \(name): the disk is full (free some space or record to another disk)" }
        return "cannot write to \(name): \(String(cString: strerror(errno)))"
    }
}
