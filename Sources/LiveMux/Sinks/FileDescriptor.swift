#if canImport(Glibc)
import Glibc
#endif

/// A POSIX file descriptor with the writes sinks need: whole writes that retry on EINTR and
/// short writes, and positioned writes for the trailer's header updates.
struct FileDescriptor: Sendable {
    let raw: Int32
    let name: String

    static let standardOutput = FileDescriptor(raw: 1, name: "stdout")

    /// Creates or truncates a file for writing; without `overwrite`, a regular file that exists
    /// is left alone and refused (`O_EXCL`, so nothing is truncated even in a race).
    static func create(_ path: String, overwrite: Bool = true) throws -> FileDescriptor {
        var fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL), 0o644)
        if fd < 0 && errno == EEXIST {
            // A device or FIFO (/dev/null, a named pipe) is written, not overwritten.
            var info = stat()
            if stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFREG {
                fd = open(path, O_WRONLY | O_CLOEXEC, 0o644)
            } else {
                throw LiveMuxError.output("\(path) exists, and overwriting it was not asked for")
            }
        }
        if fd < 0 {
            let code = errno
            throw LiveMuxError.output("cannot create \(path): \(String(cString: strerror(code)))\(hint(code, path))")
        }
        return FileDescriptor(raw: fd, name: path)
    }

    /// What to do about a file that could not be opened for writing: the file itself when it
    /// exists (read-only, with -y), else its directory.
    private static func hint(_ code: Int32, _ path: String) -> String {
        switch code {
        case ENOENT: return " (create the directory first)"
        case EROFS: return " (the file system is read-only: choose a directory on another)"
        case EACCES, EPERM:
            var info = stat()
            if lstat(path, &info) == 0 { return " (the file exists and is not writable: change its permissions, or choose another name)" }
            return " (its directory is not writable: choose a writable directory)"
        default: return ""
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(raw, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw SinkError(errno: errno, name: name)
            }
            offset += n
        }
    }

    /// Writes the buffers in order with as few `writev` calls as it takes.
    func write(_ buffers: [UnsafeRawBufferPointer]) throws {
        var vectors = buffers.filter { !$0.isEmpty }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var first = 0
        while first < vectors.count {
            let n = vectors[first...].withUnsafeBufferPointer { writev(raw, $0.baseAddress, Int32(min($0.count, 1024))) }  // IOV_MAX
            if n < 0 {
                if errno == EINTR { continue }
                throw SinkError(errno: errno, name: name)
            }
            // Skip what went out; a short write leaves part of one buffer.
            var left = n
            while first < vectors.count, left >= vectors[first].iov_len {
                left -= vectors[first].iov_len
                first += 1
            }
            if left > 0 {
                vectors[first].iov_base += left
                vectors[first].iov_len -= left
            }
        }
    }

    func write(_ bytes: [UInt8], at position: Int64) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = pwrite(raw, buffer.baseAddress! + offset, buffer.count - offset, off_t(position) + off_t(offset))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw SinkError(errno: errno, name: name)
                }
                offset += n
            }
        }
    }

    func close() { _ = Glibc.close(raw) }
}
