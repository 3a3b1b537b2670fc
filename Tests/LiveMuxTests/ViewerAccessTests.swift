import XCTest
import FFmpeg
@testable import LiveMux

final class ViewerAccessTests: XCTestCase {
    /// RFC 4231 test case 2: libavutil's HMAC-SHA256 is the standard one.
    func testHMACSHA256KnownAnswer() throws {
        let mac = try HMACSHA256.digest(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(mac.map { String(format: "%02x", $0) }.joined(), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testKeyAndSignedLinks() throws {
        let access = try XCTUnwrap(ViewerAccess(key: "k&y=s3cret"))
        XCTAssertNil(ViewerAccess(key: "short"))
        XCTAssertTrue(access.allows(path: "/live.flv", query: "key=k%26y%3Ds3cret"), "percent-decoded")
        XCTAssertEqual(access.keyQuery, "key=k%26y%3Ds3cret")
        XCTAssertFalse(access.allows(path: "/live.flv", query: ""))
        XCTAssertFalse(access.allows(path: "/live.flv", query: "key="))
        XCTAssertFalse(access.allows(path: "/live.flv", query: "key=k&y=s3cret"))
        let now = Date(timeIntervalSince1970: 1_000_000)
        let sig = try access.signature(path: "/live.flv", expires: "1000060")
        XCTAssertTrue(access.allows(path: "/live.flv", query: "expires=1000060&sig=\(sig)", now: now))
        XCTAssertFalse(access.allows(path: "/live.flv", query: "expires=1000060&sig=\(sig)", now: now.addingTimeInterval(61)), "expired")
        XCTAssertFalse(access.allows(path: "/live.asf", query: "expires=1000060&sig=\(sig)", now: now), "another path")
        XCTAssertFalse(access.allows(path: "/live.flv", query: "sig=\(sig)", now: now), "no expiry")
        XCTAssertFalse(access.allows(path: "/live.flv", query: "expires=x&sig=\(sig)", now: now))
        // A right key does not rescue a bad signature.
        XCTAssertFalse(access.allows(path: "/live.flv", query: "key=k%26y%3Ds3cret&sig=00", now: now))
    }

    /// A signature over `*` opens every path until it expires; the page answered to a signed link
    /// hands its requests one with the link's expiry, and to a key link the key.
    func testASignatureOverEveryPathAndWhatThePageCarries() throws {
        let access = try XCTUnwrap(ViewerAccess(key: "k&y=s3cret"))
        let now = Date(timeIntervalSince1970: 1_000_000)
        let every = try access.signature(path: "*", expires: "1000060")
        for path in ["/", "/stats", "/live.mp4", "/live/3.m4s"] {
            XCTAssertTrue(access.allows(path: path, query: "expires=1000060&sig=\(every)", now: now), path)
        }
        XCTAssertFalse(access.allows(path: "/stats", query: "expires=1000060&sig=\(every)", now: now.addingTimeInterval(61)), "expired")
        let page = try access.signature(path: "/", expires: "1000060")
        XCTAssertFalse(access.allows(path: "/stats", query: "expires=1000060&sig=\(page)", now: now), "a link for / opens / alone")
        XCTAssertEqual(access.pageQuery(for: "expires=1000060&sig=\(page)"), "expires=1000060&sig=\(every)")
        XCTAssertEqual(access.pageQuery(for: "key=k%26y%3Ds3cret"), "key=k%26y%3Ds3cret")
        XCTAssertEqual(access.pageQuery(for: ""), "")
    }

    func testConstantTimeComparison() {
        XCTAssertTrue(ViewerAccess.equalInConstantTime(Array("abc".utf8), Array("abc".utf8)))
        XCTAssertFalse(ViewerAccess.equalInConstantTime(Array("abc".utf8), Array("abd".utf8)))
        XCTAssertFalse(ViewerAccess.equalInConstantTime(Array("abc".utf8), Array("abc\0".utf8)))
        XCTAssertFalse(ViewerAccess.equalInConstantTime([], Array("a".utf8)))
    }
}
