import XCTest
@testable import LiveMux

/// The control API reads every request into a typed command before the job is asked (issue 49,
/// item 4); a request it cannot read is refused naming its field, and no job is needed for that.
final class ControlCommandTests: XCTestCase {
    private func command(_ method: String, _ path: String, _ body: String = "") throws -> ControlCommand {
        try ControlAPI.command(method: method, path: path, body: Array(body.utf8))
    }

    func testEveryRequestIsReadIntoItsCommand() throws {
        XCTAssertEqual(try command("GET", "/api"), .describe)
        XCTAssertEqual(try command("PATCH", "/api/sources/a1", #"{"mute": true, "volume": 0.5}"#), .setAudio(source: "a1", volume: 0.5, muted: true))
        XCTAssertEqual(try command("DELETE", "/api/sources/v2"), .removeSource("v2"))
        XCTAssertEqual(try command("POST", "/api/sources", #"{"audio": "lavfi:sine", "options": {"sample_rate": 48000}}"#),
                       .addSource(SourceSpec(format: "lavfi", url: "sine", options: ["sample_rate": "48000"]), kind: .audio))
        XCTAssertEqual(try command("POST", "/api/segments/cut"), .cutSegments)
        XCTAssertEqual(try command("PATCH", "/api/outputs/o1", #"{"vbitrate": "800k"}"#), .setVideoBitRate(output: "o1", 800_000))
        XCTAssertEqual(try command("DELETE", "/api/outputs/o3"), .removeOutput("o3"))
        XCTAssertEqual(try command("POST", "/api/outputs/o1/reconnect"), .reconnectOutput("o1"))
        var small = OutputEncoding()
        (small.width, small.height, small.videoBitRate) = (640, 360, 500_000)
        XCTAssertEqual(try command("POST", "/api/outputs", #"{"output": "rtmp://h/live/k", "size": "640x360", "vbitrate": 500000}"#),
                       .addOutput(OutputSpec(destination: .network("rtmp://h/live/k"), format: .flv, encoding: small), overwrite: false))
        XCTAssertEqual(try command("PUT", "/api/layout", #"{"layout": "side-by-side", "main": "v1"}"#), .setLayout(.sideBySide, main: "v1"))
    }

    func testARequestThatCannotBeReadIsRefusedNamingItsField() {
        for (method, path, body, status, field) in [
            ("PATCH", "/api/sources/a1", #"{"mute": 1}"#, "400 Bad Request", "mute"),
            ("PATCH", "/api/sources/a1", #"{"loud": true}"#, "400 Bad Request", "loud"),
            ("POST", "/api/sources", #"{"video": "a", "audio": "b"}"#, "400 Bad Request", "audio"),
            ("PATCH", "/api/outputs/o1", #"{"vbitrate": "0.5k"}"#, "400 Bad Request", "vbitrate"),
            ("POST", "/api/outputs", #"{"output": "x.mp4"}"#, "400 Bad Request", "format"),
            ("GET", "/api/outputs", "", "405 Method Not Allowed", nil),
            ("DELETE", "/api", "", "405 Method Not Allowed", nil),
            ("GET", "/api/nothing", "", "404 Not Found", nil),
        ] as [(String, String, String, String, String?)] {
            XCTAssertThrowsError(try command(method, path, body), "\(method) \(path) \(body)") {
                let error = $0 as? ControlError
                XCTAssertEqual(error?.status, status, "\(method) \(path) \(body)")
                XCTAssertEqual(error?.field, field, "\(method) \(path) \(body)")
            }
        }
    }
}
