import XCTest
@testable import LiveMuxCLI
import LiveMux

final class SecretOutputArgumentTests: XCTestCase {
    func testEnvironmentVariablesInURLs() throws {
        let env = ["KEY": "k3y", "HOST_1": "h"]
        XCTAssertEqual(try SecretOutputArgument.resolve("rtmp://${HOST_1}/live/${KEY}", environment: env), "rtmp://h/live/k3y")
        // Not in file names: a file may be called ${X}.
        XCTAssertEqual(try SecretOutputArgument.resolve("${KEY}.flv", environment: env), "${KEY}.flv")
        for (url, says) in [("rtmp://h/live/${NOPE}", "${NOPE}, which is not set"), ("rtmp://h/live/${KEY", "without a closing"),
                            ("rtmp://h/live/${K-Y}", "not an environment variable name")] {
            XCTAssertThrowsError(try SecretOutputArgument.resolve(url, environment: env)) { error in
                XCTAssertTrue(error is UsageError)
                XCTAssertTrue(String(describing: error).contains(says), "\(error)")
            }
        }
    }

    func testOutputFromAFileOthersCannotRead() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/push.url"
        _ = FileManager.default.createFile(atPath: file, contents: Data("rtmp://h/live/s3cret\nignored\n".utf8), attributes: [.posixPermissions: 0o600])
        let c = try RecordCommand.parse(["-o", "@" + file]).configuration
        XCTAssertEqual(c.outputs.destinations.map(\.destination), [.network("rtmp://h/live/s3cret")])

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        XCTAssertThrowsError(try RecordCommand.parse(["-o", "@" + file])) { error in
            XCTAssertTrue(String(describing: error).contains("every user of this machine may read"), "\(error)")
            XCTAssertFalse(String(describing: error).contains("s3cret"))
        }
        XCTAssertThrowsError(try RecordCommand.parse(["-o", "@\(dir)/none"])) { error in
            XCTAssertTrue(String(describing: error).contains("no readable file"), "\(error)")
        }
    }
}
