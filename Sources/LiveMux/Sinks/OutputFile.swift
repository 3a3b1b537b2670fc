import Foundation

/// A file livemux writes beside its media (`--stats`, `report --svg`), created by the same rule
/// as media files: without `overwrite` a regular file that exists is refused (`O_EXCL`).
public enum OutputFile {
    /// Creates (or, with `overwrite`, truncates) `path` and returns a handle that closes it.
    public static func create(_ path: String, overwrite: Bool) throws -> FileHandle {
        let fd = try FileDescriptor.create(path, overwrite: overwrite)
        return FileHandle(fileDescriptor: fd.raw, closeOnDealloc: true)
    }
}
