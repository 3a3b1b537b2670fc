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
        // What a browser plays is named too (issue 52, item 10): the fragmented MP4 and HLS.
        let base = flv.replacingOccurrences(of: "/live.flv", with: "")
        XCTAssertTrue(text.contains("browsers play \(base)/live.mp4 and \(base)/live.m3u8\n"), text)
        XCTAssertFalse(text.contains("warning:"), "loopback: no warning: \(text)")
    }

    func testIPv6Loopback() throws { try serveAndWatch("[::1]:0", expectHost: "[::1]") }

    func testLocalhostIsIPv4Loopback() throws { try serveAndWatch("localhost:0", expectHost: "127.0.0.1") }

    /// With -q the bound address is still said, as it is no chatter (port 0 leaves no other way to
    /// learn it), with the viewer key masked: -q keeps it out of logs (issue 42, item 3).
    func testQuietStillSaysWhereItListens() throws {
        let keyFile = "\(dir)/viewer.key"
        _ = FileManager.default.createFile(atPath: keyFile, contents: Data("vi3wer-Key-0042\n".utf8), attributes: [.posixPermissions: 0o600])
        for keyArgs in [[], ["--viewer-key-file", keyFile]] {
            let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-q", "-t", "2", "--size", "160x120"] + keyArgs, directory: dir)
            let query = keyArgs.isEmpty ? "" : "?key=****"
            let urls = try XCTUnwrap(serve.viewerURLs(), "printed with -q: \(serve.stderr)")
            let flv = try XCTUnwrap(urls.first)
            XCTAssertTrue(flv.hasPrefix("http://127.0.0.1:") && flv.hasSuffix("/live.flv" + query) && !flv.contains(":0/"), flv)
            let base = String(flv.prefix { $0 != "?" }).replacingOccurrences(of: "/live.flv", with: "")
            XCTAssertEqual(serve.dashboardURL(), base + "/" + query, serve.stderr)
            if keyArgs.isEmpty { XCTAssertTrue(Network.get(port: try XCTUnwrap(Int(base.split(separator: ":").last ?? "")), "/").hasPrefix("HTTP/1.1 200"), base) }
            XCTAssertEqual(serve.wait(), 0, serve.stderr)
            XCTAssertEqual(serve.stderr.split(separator: "\n").count, 3, "the URLs alone: \(serve.stderr)")
            XCTAssertTrue(serve.stderr.contains("browsers play \(base)/live.mp4\(query) and \(base)/live.m3u8\(query)\n"), serve.stderr)
            XCTAssertFalse(serve.stderr.contains("vi3wer"), serve.stderr)
        }
    }

    /// A busy port's hint names the option that gave it (issue 42, item 4: --http's said --listen).
    func testBusyPortHintNamesTheOptionUsed() throws {
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "8", "--size", "160x120"], directory: dir)
        let url = try XCTUnwrap(serve.dashboardURL(), serve.stderr)
        let port = try XCTUnwrap(url.split(separator: ":").last?.split(separator: "/").first.map(String.init))
        for option in ["--http", "--listen"] {
            let command = option == "--http" ? ["record", "-o", "\(dir)/x.flv"] : ["serve"]
            let r = try Tools.livemux(command + [option, "127.0.0.1:\(port)", "-t", "1"], timeout: 20)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("Address already in use (choose another \(option) port)"), r.stderr)
            XCTAssertEqual(r.stderr.components(separatedBy: "--").count, 2, "names no other option: \(r.stderr)")
        }
        serve.stop()
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }
}
