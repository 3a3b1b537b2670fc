import XCTest
@testable import LiveMuxCLI
import LiveMux

final class NetworkOptionsTests: XCTestCase {
    func testURLOutputsAndTheirContainers() throws {
        let c = try RecordCommand.parse(["-o", "rec.asf", "-o", "rtmp://h/live/key", "-f", "asf", "-o", "tcp://h:5000",
                                         "-o", "srt://h:9000"]).configuration
        XCTAssertEqual(c.outputs.destinations, [OutputSpec(destination: .file("rec.asf"), format: .asf),
                                   OutputSpec(destination: .network("rtmp://h/live/key"), format: .flv),
                                   OutputSpec(destination: .network("tcp://h:5000"), format: .asf),
                                   OutputSpec(destination: .network("srt://h:9000"), format: .flv)])
        XCTAssertThrowsError(try RecordCommand.parse(["-f", "asf", "-o", "rtmp://h/live/key"])) { error in
            XCTAssertTrue(String(describing: error).contains("RTMP carries FLV only"))
            XCTAssertFalse(String(describing: error).contains("key"), "the key is masked in the message")
        }
    }

    func testRTMPURLWithoutApplicationAndKeyIsAUsageError() throws {
        for command in [["-o", "rtmp://127.0.0.1:1935"], ["-o", "a.flv", "-o", "rtmp://h/live"]] {
            XCTAssertThrowsError(try RecordCommand.parse(command)) { error in
                XCTAssertTrue(error is UsageError, "\(error)")
                XCTAssertTrue(String(describing: error).contains("needs an application and a stream key"), "\(error)")
            }
        }
    }

    func testReconnectAndQueueOptions() throws {
        let c = try RecordCommand.parse(["-o", "rtmp://h/a/k", "--reconnect-delay", "0.2", "--reconnect-max-delay", "3",
                                         "--reconnect-attempts", "4", "--output-queue", "100"]).configuration
        XCTAssertEqual(c.outputs.reconnect, ReconnectPolicy(firstDelay: 0.2, maxDelay: 3, attempts: 4))
        XCTAssertEqual(c.outputs.queueCapacity, 100)
        XCTAssertThrowsError(try RecordCommand.parse(["-o", "a.flv", "--reconnect-attempts", "-1"]))
        XCTAssertThrowsError(try RecordCommand.parse(["-o", "a.flv", "--output-queue", "2"]))
    }

    func testServeListensOnLoopbackByDefault() throws {
        let c = try RecordCommand.parse([], serving: true).configuration
        XCTAssertEqual(c.outputs.listen, ListenAddress(host: "127.0.0.1", port: 8080))
        XCTAssertTrue(c.outputs.destinations.isEmpty, "serve needs no -o")
        XCTAssertEqual(try RecordCommand.parse(["--listen", "0.0.0.0:9000"], serving: true).configuration.outputs.listen,
                       ListenAddress(host: "0.0.0.0", port: 9000))
        XCTAssertEqual(try RecordCommand.parse(["--listen", "0.0.0.0:9000"], serving: true).warnings,
                       ["--listen 0.0.0.0:9000 is not loopback: anyone who can reach this machine can watch (use 127.0.0.1 to keep it local)"])
        XCTAssertEqual(try RecordCommand.parse(["--listen", "[::]:9000"], serving: true).warnings.count, 1)
        for local in ["localhost:9000", "[::1]:9000", "9000", ":9000"] {
            XCTAssertEqual(try RecordCommand.parse(["--listen", local], serving: true).warnings, [], local)
        }
        XCTAssertThrowsError(try RecordCommand.parse(["--listen", "nowhere"], serving: true))
        XCTAssertThrowsError(try RecordCommand.parse(["--listen", "127.0.0.1:8080", "-o", "a.flv"]), "--listen belongs to serve")
        XCTAssertThrowsError(try RecordCommand.parse([]), "record needs an output")
    }

    func testMaxViewers() throws {
        XCTAssertEqual(try RecordCommand.parse([], serving: true).configuration.outputs.maxViewers, 1000)
        XCTAssertEqual(try RecordCommand.parse(["--max-viewers", "5000"], serving: true).configuration.outputs.maxViewers, 5000)
        XCTAssertThrowsError(try RecordCommand.parse(["--max-viewers", "0"], serving: true))
        XCTAssertThrowsError(try RecordCommand.parse(["--max-viewers", "10", "-o", "a.flv"]), "--max-viewers goes with --listen")
    }
}
