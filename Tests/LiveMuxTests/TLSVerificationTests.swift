import XCTest
import FFmpeg
@testable import LiveMux

final class TLSVerificationTests: XCTestCase {
    /// rtmps:// and tls:// get tls_verify=1 and the CA file; plain protocols get nothing; --tls-insecure turns it off.
    func testOptionsPerScheme() {
        var tls = TLSVerification()
        let checked = tls.protocolOptions(for: "RTMPS://h/live/k")
        XCTAssertTrue(checked.contains { $0 == ("tls_verify", "1") })
        XCTAssertTrue(checked.contains { $0 == ("ca_file", TLSVerification.systemCAFile) })
        XCTAssertEqual(tls.protocolOptions(for: "tls://h:443").count, 2)
        XCTAssertTrue(tls.protocolOptions(for: "rtmp://h/live/k").isEmpty)
        XCTAssertTrue(tls.protocolOptions(for: "srt://h:9000").isEmpty)
        tls.insecure = true
        XCTAssertTrue(tls.protocolOptions(for: "rtmps://h/live/k").elementsEqual([("tls_verify", "0")], by: ==))
    }

    /// rtmpts cannot be checked (FFmpeg opens its https without options): refused unless insecure.
    func testTunnelledRTMPSNeedsInsecure() {
        var tls = TLSVerification()
        XCTAssertNotNil(tls.problem(for: "rtmpts://h/live/k"))
        tls.caFile = "/nonexistent/ca.pem"
        XCTAssertTrue(tls.problem(for: "rtmps://h/live/k")?.contains("/nonexistent/ca.pem cannot be read") == true)
        XCTAssertNil(tls.problem(for: "rtmp://h/live/k"))
        tls.insecure = true
        XCTAssertNil(tls.problem(for: "rtmpts://h/live/k"))
        XCTAssertNil(tls.problem(for: "rtmps://h/live/k"))
    }

    /// The reason is read from tls_gnutls.c's log lines, with or without av_log's prefix.
    func testFailureFromLogLines() {
        XCTAssertEqual(TLSVerificationFailure(logLines: ["[tls @ 0x55] Peer certificate failed verification"])?.reason, .untrusted)
        XCTAssertEqual(TLSVerificationFailure(logLines: ["[tcp @ 0x1] x", "[tls @ 0x2] The certificate's owner does not match hostname h.example"])?.reason,
                       .hostName("h.example"))
        XCTAssertEqual(TLSVerificationFailure(logLines: ["Unable to verify peer certificate: Error in the certificate."])?.reason,
                       .unverifiable("Error in the certificate."))
        XCTAssertNil(TLSVerificationFailure(logLines: ["[tcp @ 0x1] Connection to tcp://h:1 failed: Connection refused"]))
        XCTAssertNil(TLSVerificationFailure(logLines: []))
    }
}
