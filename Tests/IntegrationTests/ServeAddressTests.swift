import Foundation
import XCTest

/// `serve` says where viewers connect, once, and listens on IPv6 loopback and `localhost` too
/// (issue 18, item 9). Port 0: the kernel picks a free port, and the printed URLs carry it.
final class ServeAddressTests: TemporaryDirectoryTestCase {
    /// Runs `serve` for 4 s and reads /live.flv through the URL it printed.
    func serveAndWatch(_ listen: String, expectHost: String) throws {
        let serve = try ServingLivemux(["serve", "--listen", listen, "-t", "4", "--size", "160x120"], directory: dir)
        let urls = try XCTUnwrap(serve.viewerURLs(), "the URLs are printed at start")
        XCTAssertEqual(urls.count, 2, "\(urls)")
        let flv = try XCTUnwrap(urls.first)
        XCTAssertTrue(flv.hasPrefix("http://\(expectHost):") && flv.hasSuffix("/live.flv"), flv)
        XCTAssertFalse(flv.contains(":0/"), "the port bound, not 0: \(flv)")
        XCTAssertEqual(urls.last, flv.replacingOccurrences(of: "/live.flv", with: "/live.asf"))
        let out = "\(dir)/viewer-\(UUID().uuidString).flv"
        let viewer = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", flv, "-c", "copy", "-f", "flv", out], timeout: 20)
        XCTAssertEqual(viewer.status, 0, viewer.stderr)
        XCTAssertGreaterThan(try Tools.probe(out).stream("video")?.packetCount ?? 0, 30)
        XCTAssertEqual(try Tools.decodeErrors(out), "")
        XCTAssertEqual(serve.wait(), 0)
        let text = serve.stderr
        XCTAssertEqual(text.components(separatedBy: "serving viewers at").count, 2, "printed once: \(text)")
        XCTAssertFalse(text.contains("warning:"), "loopback: no warning: \(text)")
    }

    func testIPv6Loopback() throws { try serveAndWatch("[::1]:0", expectHost: "[::1]") }

    func testLocalhostIsIPv4Loopback() throws { try serveAndWatch("localhost:0", expectHost: "127.0.0.1") }
}
