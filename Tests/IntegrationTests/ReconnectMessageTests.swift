import Foundation
import XCTest

/// What a failing URL output says (issue 18, item 10): attempts counted one way from the first
/// message to the last, the masked URL once a line, the first wait about --reconnect-delay's
/// default of 0.5 s, and, when it is given up while the file goes on, every output's fate on the
/// last line and exit 1.
final class ReconnectMessageTests: TemporaryDirectoryTestCase {
    func testMessagesAgreeAndTheRunFails() throws {
        let port = try Network.freePort(), file = "\(dir)/rec.flv"
        let masked = "rtmp://127.0.0.1:\(port)/live/****"
        let r = try Tools.livemux(["record", "--size", "160x120", "-t", "4", "--reconnect-attempts", "2",
                                   "-o", file, "-o", "rtmp://127.0.0.1:\(port)/live/SECRET"], timeout: 30)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        func wait(_ attempt: Int) throws -> Double {
            let line = try XCTUnwrap(lines.first { $0.contains("; reconnect attempt \(attempt) of 2 in ") }, r.stderr)
            XCTAssertTrue(line.hasPrefix("warning: output \(masked): Connection refused; "), line)
            return try XCTUnwrap(Double(line.split(separator: " ").dropLast().last ?? ""), line)
        }
        XCTAssertEqual(try wait(1), 0.5, accuracy: 0.1 + 0.001, "about the default first delay (±20%)")
        XCTAssertEqual(try wait(2), 1.0, accuracy: 0.2 + 0.001, "doubled (±20%)")
        XCTAssertTrue(lines.contains("warning: output \(masked) stopped: gave up after 2 reconnect attempts: Connection refused"
                                     + " (check that the server is up and the URL is right)"), r.stderr)
        for line in lines where line.contains(masked) {
            XCTAssertEqual(line.components(separatedBy: masked).count, 2, "the URL once: \(line)")
        }
        XCTAssertFalse(r.stderr.contains("SECRET"))
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(lines.last, "error: 1 of 2 outputs failed: \(file) complete; \(masked) stopped: gave up after 2 reconnect"
                       + " attempts: Connection refused (check that the server is up and the URL is right)")
        XCTAssertEqual(try Tools.probe(file).stream("video")?.packetCount, 120, "the file went on to the end")
    }
}
