import Foundation
import XCTest

/// A test case with a directory of its own: `dir` is made empty before each test and removed,
/// with whatever the test left in it, after.
class TemporaryDirectoryTestCase: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("livemux-unit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if !dir.isEmpty { try? FileManager.default.removeItem(atPath: dir) }
        try super.tearDownWithError()
    }
}
