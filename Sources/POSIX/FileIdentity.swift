import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which file a name writes to, so two names of one file (`./a.flv`, a symbolic or hard link to
/// it) are seen as one: the device and inode of a file that exists, else the resolved path where
/// it will be created (a dangling link's is the path it points to, as writing creates that). The
/// CLI's claims on the files it writes, and a job's outputs added while it runs, both ask it.
public enum FileIdentity: Hashable, Sendable {
    case inode(device: UInt64, inode: UInt64)
    case path(String)

    /// Links followed before a name is taken as a loop, as the kernel's ELOOP limit.
    private static let maximumLinks = 40

    public init(_ path: String) {
        var info = stat()
        // stat follows every link itself, also those whose text is no path (/dev/stdout's pipe).
        if (try? syscall(where: "stat") { stat(path, &info) }) != nil {
            self = .inode(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            return
        }
        let target = Self.followingLinks(path)
        if (try? syscall(where: "stat") { stat(target, &info) }) != nil {
            self = .inode(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        } else {
            self = .path(Self.resolved(target))
        }
    }

    /// The path a link at `path` points to when nothing is there (writing it creates that file);
    /// nil when `path` is no link, or its file exists.
    public static func danglingTarget(of path: String) -> String? {
        var info = stat()
        guard (try? syscall(where: "lstat") { lstat(path, &info) }) != nil, info.st_mode & S_IFMT == S_IFLNK,
              (try? syscall(where: "stat") { stat(path, &info) }) == nil else { return nil }
        return followingLinks(path)
    }

    /// `path` with its last component's links followed, as far as they go: the file a write
    /// through it opens (or creates, when the last link points to nothing).
    private static func followingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<maximumLinks {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard let length = try? syscall(where: "readlink", { readlink(current, &buffer, buffer.count - 1) }) else { return current }
            let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // A relative link is read from the directory that holds it.
            current = link.hasPrefix("/") ? link : URL(fileURLWithPath: current).deletingLastPathComponent().appendingPathComponent(link).path
        }
        return current
    }

    /// One spelling of a path where nothing is yet: its directory's links resolved, `.` and `..` gone.
    private static func resolved(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let directory = url.deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL
        return directory.appendingPathComponent(url.lastPathComponent).path
    }
}
