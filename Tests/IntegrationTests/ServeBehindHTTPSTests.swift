import Foundation
import XCTest

/// `serve` on loopback behind nginx terminating TLS (docs/security.md's deployment): a viewer
/// that checks the certificate (ffprobe with tls_verify, curl with the CA) plays the stream over
/// HTTPS, and the viewer key passes through the proxy.
final class ServeBehindHTTPSTests: TemporaryDirectoryTestCase {
    let key = "https-viewer-KEY9"

    func testViewersOverHTTPSThroughNginx() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx missing: run scripts/setup --test")
        let certificates = try TestCertificates(directory: dir)
        let server = try certificates.server("web", commonName: "localhost", names: ["DNS:localhost"])
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "4", "--size", "160x120", "--viewer-key", key],
                                       directory: dir)
        let flv = try XCTUnwrap(serve.viewerURLs()?.first, "the URLs are printed at start")
        let backend = try XCTUnwrap(Int(flv.split(separator: ":")[2].prefix { $0.isNumber }))
        let proxy = try HTTPSProxy(directory: dir, certificate: server.certificate, key: server.key, backendPort: backend)
        let https = "https://localhost:\(proxy.port)"

        let probe = try Tools.run("ffprobe", ["-v", "error", "-tls_verify", "1", "-ca_file", certificates.caFile, "-of", "json",
                                              "-show_streams", "\(https)/live.flv?key=\(key)"], timeout: 20)
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertTrue(probe.stdoutText.contains("\"codec_name\": \"h264\""), probe.stdoutText)
        XCTAssertTrue(probe.stdoutText.contains("\"codec_name\": \"aac\""), probe.stdoutText)

        let refused = try Tools.run("curl", ["-s", "--noproxy", "*", "--cacert", certificates.caFile, "-o", "/dev/null",
                                             "-w", "%{http_code}", "--max-time", "3", "\(https)/live.flv"])
        XCTAssertEqual(refused.stdoutText, "403", "no key through the proxy: \(refused.stderr)")
        let index = try Tools.run("curl", ["-s", "--noproxy", "*", "--cacert", certificates.caFile, "--max-time", "3", "\(https)/?key=\(key)"])
        XCTAssertTrue(index.stdoutText.contains("/live.flv"), index.stdoutText)
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }
}
