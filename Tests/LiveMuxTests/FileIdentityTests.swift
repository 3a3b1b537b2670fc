import XCTest
import Foundation
import POSIX

/// Which file a name writes to: every spelling and link of one file is one identity, for the CLI's
/// claims and for an output added to a running job alike.
final class FileIdentityTests: TemporaryDirectoryTestCase {
    func testAFileThatExistsIsOneByAnyNameOrLink() throws {
        let file = "\(dir)/a.flv"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data("a".utf8)))
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(dir)/b.flv", contents: Data("b".utf8)))
        XCTAssertEqual(symlink(file, "\(dir)/symbolic.flv"), 0)
        XCTAssertEqual(link(file, "\(dir)/hard.flv"), 0)
        for name in ["\(dir)/./a.flv", "\(dir)/symbolic.flv", "\(dir)/hard.flv"] {
            XCTAssertEqual(FileIdentity(name), FileIdentity(file), name)
        }
        XCTAssertNotEqual(FileIdentity("\(dir)/b.flv"), FileIdentity(file))
        XCTAssertNil(FileIdentity.danglingTarget(of: "\(dir)/symbolic.flv"), "its file exists")
    }

    /// Where nothing is yet: the path it will be created at, its directory's links resolved; a
    /// dangling link is the file it points to, as writing through it creates that.
    func testANameWithNothingThereIsWhereItWillBeCreated() throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/real", withIntermediateDirectories: true)
        XCTAssertEqual(symlink("\(dir)/real", "\(dir)/linked"), 0)
        XCTAssertEqual(FileIdentity("\(dir)/real/../real/new.flv"), FileIdentity("\(dir)/real/new.flv"))
        XCTAssertEqual(FileIdentity("\(dir)/linked/new.flv"), FileIdentity("\(dir)/real/new.flv"))
        XCTAssertNotEqual(FileIdentity("\(dir)/real/other.flv"), FileIdentity("\(dir)/real/new.flv"))

        XCTAssertEqual(symlink("real/target.flv", "\(dir)/dangling.flv"), 0)
        XCTAssertEqual(FileIdentity("\(dir)/dangling.flv"), FileIdentity("\(dir)/real/target.flv"))
        XCTAssertEqual(FileIdentity.danglingTarget(of: "\(dir)/dangling.flv").map { URL(fileURLWithPath: $0).standardizedFileURL.path },
                       "\(dir)/real/target.flv")
        XCTAssertNil(FileIdentity.danglingTarget(of: "\(dir)/real/new.flv"), "no link")
    }
}
