import Foundation
import XCTest

/// `serve --viewer-key`: every endpoint answers 403 unless the request carries the key or a
/// signed link that has not expired; asked with curl, signatures made with openssl.
final class ViewerKeyTests: TemporaryDirectoryTestCase {
    let key = "vi3wer-Key-0042"

    /// The HTTP status curl got (`HEAD` with `head`).
    private func status(_ url: String, method: String = "GET", head: Bool = false) throws -> String {
        let r = try Tools.run("curl", ["-s", "--noproxy", "*", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "3", "-X", method]
                              + (head ? ["-I"] : []) + [url])
        return r.stdoutText
    }

    private func signature(_ message: String) throws -> String { try Tools.hmacSHA256(message, key: key, scratch: dir) }

    func testEveryEndpointNeedsTheKeyOrASignedLink() throws {
        let keyFile = "\(dir)/viewer.key"
        FileManager.default.createFile(atPath: keyFile, contents: Data("\(key)\n".utf8), attributes: [.posixPermissions: 0o600])
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "4", "--size", "160x120", "--viewer-key-file", keyFile],
                                       directory: dir)
        let urls = try XCTUnwrap(serve.viewerURLs(), "the URLs are printed at start")
        let flv = try XCTUnwrap(urls.first)
        XCTAssertTrue(flv.hasSuffix("/live.flv?key=\(key)"), "the printed URLs carry the key: \(urls)")
        let base = String(flv.prefix { $0 != "?" }).replacingOccurrences(of: "/live.flv", with: "")

        for path in ["/live.flv", "/live.asf", "/", "/nothing", "/?format=json"] {
            XCTAssertEqual(try status(base + path), "403", "no key: \(path)")
            XCTAssertEqual(try status(base + path + (path.contains("?") ? "&" : "?") + "key=wrong-key-0042"), "403", "wrong key: \(path)")
        }
        XCTAssertEqual(try status(base + "/live.flv", method: "OPTIONS"), "403")
        XCTAssertEqual(try status(base + "/live.flv", head: true), "403")
        XCTAssertEqual(try status(base + "/live.flv?key=\(key)x"), "403", "a longer key is not the key")

        XCTAssertEqual(try status(base + "/?key=\(key)"), "200")
        XCTAssertEqual(try status(base + "/live.asf?key=\(key)", head: true), "200")
        let got = try Tools.run("curl", ["-s", "--noproxy", "*", "--max-time", "1.5", "-o", "\(dir)/got.flv", flv])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/got.flv")).prefix(3), Data("FLV".utf8), "streamed with the key: \(got.stderr)")

        let later = String(Int(Date().timeIntervalSince1970) + 120)
        let sig = try signature("/live.flv" + later)
        XCTAssertEqual(try status(base + "/live.flv?expires=\(later)&sig=\(sig)", head: true), "200", "a signed link")
        XCTAssertEqual(try status(base + "/live.flv?expires=\(later)&sig=\(sig.uppercased())", head: true), "200", "hex in either case")
        let tampered = String(sig.dropLast()) + (sig.hasSuffix("0") ? "1" : "0")
        XCTAssertEqual(try status(base + "/live.flv?expires=\(later)&sig=\(tampered)", head: true), "403", "a changed signature")
        XCTAssertEqual(try status(base + "/live.asf?expires=\(later)&sig=\(sig)", head: true), "403", "signed for another path")
        XCTAssertEqual(try status(base + "/live.flv?expires=\(Int(later)! + 1)&sig=\(sig)", head: true), "403", "a changed expiry")
        let past = String(Int(Date().timeIntervalSince1970) - 10)
        XCTAssertEqual(try status(base + "/live.flv?expires=\(past)&sig=\(try signature("/live.flv" + past))", head: true), "403", "expired")

        XCTAssertEqual(serve.wait(), 0, serve.stderr)
        let withKey = serve.stderr.split(separator: "\n").filter { $0.contains(key) }
        XCTAssertEqual(withKey.map { String($0.prefix { $0 != ":" }) }, ["serving viewers at http", "browsers play http", "dashboard at http"],
                       "only the start lines of URLs carry the key: \(serve.stderr)")
    }

    /// The dashboard's URL printed at start works as printed: it carries the key, as the viewer
    /// URLs do (issue 42, item 2: it had none and answered 403).
    func testThePrintedDashboardURLCarriesTheKey() throws {
        let keyFile = "\(dir)/viewer.key"
        _ = FileManager.default.createFile(atPath: keyFile, contents: Data("\(key)\n".utf8), attributes: [.posixPermissions: 0o600])
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "3", "--size", "160x120", "--viewer-key-file", keyFile],
                                       directory: dir)
        let dashboard = try XCTUnwrap(serve.dashboardURL(), serve.stderr)
        XCTAssertTrue(dashboard.hasSuffix("/?key=\(key)"), dashboard)
        XCTAssertEqual(try status(dashboard), "200", dashboard)
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }

    func testShortOrMissingKeysAreUsageErrors() throws {
        let short = try Tools.livemux(["serve", "--viewer-key", "abc", "-t", "1"])
        XCTAssertEqual(short.status, 64, short.stderr)
        XCTAssertTrue(short.stderr.contains("at least 8 characters"), short.stderr)
        let open = "\(dir)/open.key"
        FileManager.default.createFile(atPath: open, contents: Data("\(key)\n".utf8), attributes: [.posixPermissions: 0o644])
        let readable = try Tools.livemux(["serve", "--viewer-key-file", open, "-t", "1"])
        XCTAssertEqual(readable.status, 64, readable.stderr)
        XCTAssertTrue(readable.stderr.contains("every user of this machine may read"), readable.stderr)
        XCTAssertFalse(readable.stderr.contains(key), readable.stderr)
    }
}
