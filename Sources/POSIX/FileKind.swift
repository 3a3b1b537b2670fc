#if canImport(Glibc)
import Glibc
#endif

/// What a name really is, as far as writing it goes. `stat` follows links, so `/dev/stdout` and
/// `/proc/self/fd/1` are whatever the process's stdout is: a regular file or a block device can be
/// seeked back in (a muxer finishes its header there); anything else (a pipe, FIFO, socket,
/// terminal or other character device) is a stream.
public enum FileKind: Sendable, Equatable {
    case regular
    case blockDevice
    case stream

    public init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFBLK: self = .blockDevice
        default: self = .stream
        }
    }

    /// The kind of what `path` names; a `SystemCallError` when it cannot be told (ENOENT: nothing
    /// is there yet).
    public init(path: String) throws(SystemCallError) {
        var info = stat()
        try syscall(where: "stat") { stat(path, &info) }
        self.init(mode: info.st_mode)
    }

    /// Whether `path` is the process's own stdout (`/dev/stdout` with the shell's `> FILE`): the
    /// shell made it for this run, so writing it overwrites nothing, as with a pipe.
    public static func isStandardOutput(_ path: String) -> Bool {
        var named = stat(), output = stat()
        do {
            try syscall(where: "stat") { stat(path, &named) }
            try syscall(where: "fstat") { fstat(1, &output) }
        } catch {
            return false  // nothing there, or no stdout: not the same file
        }
        return named.st_dev == output.st_dev && named.st_ino == output.st_ino
    }

    /// Whether a writer can go back and rewrite what it wrote.
    public var seeks: Bool { self != .stream }
}
