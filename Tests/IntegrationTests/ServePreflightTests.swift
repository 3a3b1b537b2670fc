import Foundation
import XCTest

/// A browser player on another origin asks `serve` first (a CORS preflight, `OPTIONS`) before a
/// request it may not send unasked, such as one with a `Range` header: it gets 204 and the
/// methods, headers and max age that let it go on (issue 32, item 14c). Asked with curl.
final class ServePreflightTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws { dir = try Tools.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    /// curl's answer: the status line and the header fields (names in lower case).
    func ask(_ url: String, method: String, headers: [String]) throws -> (status: String, fields: [String: String]) {
        let r = try Tools.run("curl", ["-s", "-i", "--noproxy", "*", "-X", method, "--max-time", "5"] + headers.flatMap { ["-H", $0] } + [url])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdoutText.components(separatedBy: "\r\n")
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (lines.first ?? "", fields)
    }

    func testOptionsIsAPreflightAnswer() throws {
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "3", "--size", "160x120"], directory: dir)
        let flv = try XCTUnwrap(serve.viewerURLs()?.first, "the URLs are printed at start")
        let base = flv.replacingOccurrences(of: "/live.flv", with: "")
        let browser = ["Origin: http://player.example", "Access-Control-Request-Method: GET"]
        for url in [flv, "\(base)/live.asf", "\(base)/"] {
            let a = try ask(url, method: "OPTIONS", headers: browser + ["Access-Control-Request-Headers: range, x-player-id"])
            XCTAssertEqual(a.status, "HTTP/1.1 204 No Content", url)
            XCTAssertEqual(a.fields["access-control-allow-origin"], "*", url)
            XCTAssertEqual(a.fields["access-control-allow-methods"], "GET, HEAD, OPTIONS", url)
            XCTAssertEqual(a.fields["access-control-allow-headers"], "range, x-player-id", "the headers asked for: \(url)")
            XCTAssertEqual(a.fields["access-control-max-age"], "86400", url)
            XCTAssertNil(a.fields["content-length"], "a 204 has no body, nor its length")
        }
        // Headers that are not plain field names are not echoed: the usual ones are allowed.
        let odd = try ask(flv, method: "OPTIONS", headers: browser + ["Access-Control-Request-Headers: range;x=<1>"])
        XCTAssertEqual(odd.fields["access-control-allow-headers"], "Range, Accept")
        XCTAssertTrue(try ask("\(base)/nothing", method: "OPTIONS", headers: browser).status.hasPrefix("HTTP/1.1 404"))
        let post = try ask(flv, method: "POST", headers: [])
        XCTAssertTrue(post.status.hasPrefix("HTTP/1.1 405"), post.status)
        XCTAssertEqual(post.fields["allow"], "GET, HEAD, OPTIONS")
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }
}
