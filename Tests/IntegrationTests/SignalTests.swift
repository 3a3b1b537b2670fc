import Foundation
import XCTest

/// Signals while recording: SIGTERM stops gracefully like SIGINT; a second SIGINT exits at once.
final class SignalTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws { dir = try Tools.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    func testSIGTERMFinishesTheFile() throws {
        for format in ["asf", "flv"] {
            let path = "\(dir)/term.\(format)"
            let r = try Tools.livemux(["record", "-q", "--size", "160x120", "-o", path], timeout: 30) { process in
                Thread.sleep(forTimeInterval: 2)
                process.terminate()
            }
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr, "")
            let p = try Tools.probe(path)
            XCTAssertEqual(try XCTUnwrap(p.format.seconds), 1.8, accuracy: 0.8, "a true duration in the header")
            XCTAssertEqual(try Tools.decodeErrors(path), "")
        }
    }

    /// The first SIGINT asks for a graceful stop; when that cannot finish (here stdout is a pipe
    /// nobody reads, so the mux thread is stuck in a write) a second one exits at once with 130.
    func testSecondSIGINTExitsAtOnceWith130() throws {
        let pidFile = "\(dir)/pid", status = "\(dir)/status", readerPid = "\(dir)/reader-pid"
        let script = "(sh -c 'echo $$ > \(pidFile); exec \"\(Tools.livemux)\" record -q --size 320x240 -f flv -o -'; echo $? > \(status))"
            + " | sh -c 'echo $$ > \(readerPid); exec sleep 20'"
        var signalled = Date()
        let r = try Tools.run("/bin/bash", ["-c", script], timeout: 30) { _ in
            Thread.sleep(forTimeInterval: 2)
            guard let pid = try? String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                  let p = Int32(pid) else { return XCTFail("no pid") }
            kill(p, SIGINT)
            Thread.sleep(forTimeInterval: 0.5)
            kill(p, SIGINT)
            signalled = Date()
            // Stop the reader too, so the pipeline ends.
            for _ in 0..<40 where !FileManager.default.fileExists(atPath: status) { Thread.sleep(forTimeInterval: 0.05) }
            if let reader = try? String(contentsOfFile: readerPid, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
               let r = Int32(reader) {
                kill(r, SIGTERM)
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(signalled), 3)
        XCTAssertEqual(try String(contentsOfFile: status, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), "130")
        XCTAssertTrue(r.stderr.contains("error: interrupted again"), r.stderr)
    }
}
