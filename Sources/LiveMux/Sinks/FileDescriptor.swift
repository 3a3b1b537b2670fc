import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// A POSIX file descriptor with the writes sinks need: whole writes that go on after short writes
/// (`syscall` retries EINTR), and positioned writes for the trailer's header updates.
struct FileDescriptor: Sendable {
    let raw: Int32
    let name: String

    static let standardOutput = FileDescriptor(raw: 1, name: "stdout")

    /// Creates or truncates a file for writing; without `overwrite`, a regular file that exists
    /// is left alone and refused.
    static func create(_ path: String, overwrite: Bool = true) throws -> FileDescriptor {
        guard overwrite else {
            guard let fd = try createNew(path) else { throw LiveMuxError.output("\(path) exists, and overwriting it was not asked for") }
            return fd
        }
        do {
            return try open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_TRUNC)
        } catch {
            throw cannotCreate(path, error)
        }
    }

    /// Creates a file for writing unless a regular file has that name: nil then, the file left
    /// alone (`O_EXCL`, so nothing is truncated even in a race).
    static func createNew(_ path: String) throws -> FileDescriptor? {
        do {
            return try open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_EXCL)
        } catch where error.errno == EEXIST {
            // A device or FIFO (/dev/null, a named pipe), or stdout the shell redirected, is
            // written, not overwritten.
            guard let kind = try? FileKind(path: path), kind != .regular || FileKind.isStandardOutput(path) else { return nil }
            do {
                return try open(path, O_WRONLY | O_CLOEXEC)
            } catch {
                throw cannotCreate(path, error)
            }
        } catch {
            throw cannotCreate(path, error)
        }
    }

    /// Whether it is a regular file (not a device or FIFO): one that can be cut back.
    func isRegularFile() throws -> Bool {
        var info = stat()
        do { try syscall(where: "fstat") { fstat(raw, &info) } } catch { throw SinkError(errno: error.errno, name: name) }
        return info.st_mode & S_IFMT == S_IFREG
    }

    /// Cuts the file back to `length` bytes, and the next write to there.
    func truncate(to length: Int64) throws {
        do {
            try syscall(where: "ftruncate") { ftruncate(raw, off_t(length)) }
            try syscall(where: "lseek") { lseek(raw, off_t(length), SEEK_SET) }
        } catch {
            throw SinkError(errno: error.errno, name: name)
        }
    }

    /// Opens `path` (a FIFO's open waits for its reader, and is retried if a signal cuts it short).
    private static func open(_ path: String, _ flags: Int32) throws(SystemCallError) -> FileDescriptor {
        FileDescriptor(raw: try syscall(where: "open") { Glibc.open(path, flags, 0o644) }, name: path)
    }

    private static func cannotCreate(_ path: String, _ error: SystemCallError) -> LiveMuxError {
        .output("cannot create \(path): \(error.message)\(hint(error.errno, path))")
    }

    /// What to do about a file that could not be opened for writing: the file itself when it
    /// exists (read-only, with -y), else its directory.
    private static func hint(_ code: Int32, _ path: String) -> String {
        switch code {
        case ENOENT:
            // A directory that exists and still says ENOENT makes no files (/proc, /sys).
            let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
            var info = stat()
            if (try? syscall(where: "lstat") { lstat(path, &info) }) != nil {
                return " (it is a link to a place whose directory does not exist: create that directory, or remove the link)"
            }
            guard (try? syscall(where: "stat") { stat(directory, &info) }) != nil, info.st_mode & S_IFMT == S_IFDIR else {
                return " (create the directory first)"
            }
            return " (\(directory) exists but takes no new files: choose a directory on a disk)"
        case EROFS: return " (the file system is read-only: choose a directory on another)"
        case EACCES, EPERM:
            var info = stat()
            if (try? syscall(where: "lstat") { lstat(path, &info) }) != nil { return " (the file exists and is not writable: change its permissions, or choose another name)" }
            return " (its directory is not writable: choose a writable directory)"
        default: return ""
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try checked("write") { Glibc.write(raw, bytes.baseAddress! + offset, bytes.count - offset) }
        }
    }

    /// Writes the buffers in order with as few `writev` calls as it takes.
    func write(_ buffers: [UnsafeRawBufferPointer]) throws {
        var vectors = buffers.filter { !$0.isEmpty }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        try vectors.withUnsafeMutableBufferPointer { v in
            var first = 0
            while first < v.count {
                var left = try checked("writev") { writev(raw, v.baseAddress! + first, Int32(min(v.count - first, 1024))) }  // IOV_MAX
                // Skip what went out; a short write leaves part of one buffer.
                while first < v.count, left >= v[first].iov_len {
                    left -= v[first].iov_len
                    first += 1
                }
                if left > 0 {
                    v[first].iov_base += left
                    v[first].iov_len -= left
                }
            }
        }
    }

    func write(_ bytes: [UInt8], at position: Int64) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                offset += try checked("pwrite") {
                    pwrite(raw, buffer.baseAddress! + offset, buffer.count - offset, off_t(position) + off_t(offset))
                }
            }
        }
    }

    /// Closes the file; a failure (a network file system's late write error) is the output's.
    func close() throws {
        do { try closeDescriptor(raw) } catch { throw SinkError(errno: error.errno, name: name) }
    }

    /// The call's result, or its failure as the error that names this output.
    private func checked(_ call: StaticString, _ body: () -> Int) throws(SinkError) -> Int {
        do { return try syscall(where: call, body) } catch { throw SinkError(errno: error.errno, name: name) }
    }
}
