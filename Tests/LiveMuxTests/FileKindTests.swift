import XCTest
import Foundation
import POSIX

/// What a name really is: only a regular file or a block device can be seeked back in.
final class FileKindTests: XCTestCase {
    func testModes() {
        XCTAssertEqual(FileKind(mode: S_IFREG | 0o644), .regular)
        XCTAssertEqual(FileKind(mode: S_IFBLK | 0o660), .blockDevice)
        for mode in [S_IFIFO, S_IFCHR, S_IFSOCK, S_IFDIR] { XCTAssertEqual(FileKind(mode: mode | 0o600), .stream, "\(mode)") }
        XCTAssertTrue(FileKind.regular.seeks)
        XCTAssertTrue(FileKind.blockDevice.seeks)
        XCTAssertFalse(FileKind.stream.seeks)
    }

    /// Real names: a FIFO, a character device, a file, and nothing there.
    func testNames() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("filekind-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        XCTAssertEqual(mkfifo("\(dir)/fifo", 0o600), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(dir)/file", contents: Data()))
        XCTAssertEqual(try FileKind(path: "\(dir)/fifo"), .stream)
        XCTAssertEqual(try FileKind(path: "/dev/null"), .stream)
        XCTAssertEqual(try FileKind(path: "\(dir)/file"), .regular)
        XCTAssertThrowsError(try FileKind(path: "\(dir)/none")) { XCTAssertEqual(($0 as? SystemCallError)?.errno, ENOENT) }
    }
}
