import Foundation
import XCTest

/// RTMPS to nginx-rtmp behind stunnel, on certificates from a private CA made for the test: the
/// server is checked before the stream key leaves, unless told otherwise.
final class TLSVerificationTests: TemporaryDirectoryTestCase {
    let key = "tlsS3cretKEY77"

    /// nginx-rtmp, and stunnel in front of it presenting a certificate for `names`.
    private func rtmpsServer(commonName: String = "localhost", names: [String] = ["DNS:localhost", "IP:127.0.0.1"], days: Int = 1)
        throws -> (nginx: RTMPServer, proxy: TLSProxy, certificates: TestCertificates) {
        try XCTSkipUnless(RTMPServer.isAvailable && TLSProxy.isAvailable, "nginx-rtmp or stunnel4 missing: run scripts/setup --test")
        let certificates = try TestCertificates(directory: dir)
        let server = try certificates.server("server", commonName: commonName, names: names, days: days)
        let nginx = try RTMPServer(directory: dir)
        try nginx.start()
        let proxy = try TLSProxy(directory: dir, name: "stunnel", certificate: server.certificate, key: server.key, backendPort: nginx.port)
        return (nginx, proxy, certificates)
    }

    private func push(_ port: Int, host: String = "localhost", _ options: [String] = []) throws -> Tools.Result {
        try Tools.livemux(["record", "--size", "160x120", "-t", "2", "--no-realtime", "--reconnect-delay", "0.1"] + options
                          + ["-o", "rtmps://\(host):\(port)/live/\(key)"], timeout: 30)
    }

    private func errorLines(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
    }

    /// Whether nginx saw a publish: it logs each one with the stream's name.
    private func nginxSawPublish(_ nginx: RTMPServer) throws -> Bool {
        nginx.stop()
        let log = try String(contentsOfFile: nginx.directory + "/error.log", encoding: .utf8)
        let recorded = try nginx.recordedFiles()
        return log.contains("publish") || log.contains(key) || !recorded.isEmpty
    }

    /// A certificate from a CA the system does not trust: refused at once with one error line,
    /// no reconnect attempt, exit 1, and nginx never sees a publish (the key was not sent).
    func testPrivateCAIsRefusedByDefault() throws {
        let (nginx, proxy, _) = try rtmpsServer()
        let r = try push(proxy.port)
        XCTAssertEqual(r.status, 1, r.stderr)
        let errors = errorLines(r.stderr)
        XCTAssertEqual(errors.count, 1, r.stderr)
        XCTAssertTrue(errors.first?.contains("certificate is not trusted") == true, r.stderr)
        XCTAssertTrue(errors.first?.contains("--tls-ca-file") == true, "the error names the fix: \(r.stderr)")
        XCTAssertFalse(r.stderr.contains("reconnect attempt"), "a refused certificate is not retried: \(r.stderr)")
        XCTAssertFalse(r.stderr.contains(key), r.stderr)
        XCTAssertFalse(try nginxSawPublish(nginx), "nothing reached nginx")
    }

    /// `--tls-ca-file` with the private CA: pushed, and nginx's recording reads back.
    func testPrivateCAFilePushes() throws {
        let (nginx, proxy, certificates) = try rtmpsServer()
        let r = try push(proxy.port, ["--tls-ca-file", certificates.caFile])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(errorLines(r.stderr), [], r.stderr)
        nginx.stop()
        let recorded = try XCTUnwrap(try nginx.recordedFiles().first, "nginx recorded the push")
        let probe = try Tools.probe(recorded)
        XCTAssertEqual(probe.stream("video")?.codec_name, "h264")
        XCTAssertGreaterThan(probe.stream("video")?.packetCount ?? 0, 0)
    }

    /// The URL's host is checked against the names the certificate holds: by address too.
    func testAddressInCertificatePushes() throws {
        let (nginx, proxy, certificates) = try rtmpsServer()
        let r = try push(proxy.port, host: "127.0.0.1", ["--tls-ca-file", certificates.caFile])
        XCTAssertEqual(r.status, 0, r.stderr)
        nginx.stop()
        XCTAssertEqual(try nginx.recordedFiles().count, 1, "nginx recorded the push")
    }

    /// A trusted certificate for another host name: refused, saying which name it lacks.
    func testHostNameNotInCertificateIsRefused() throws {
        let (nginx, proxy, certificates) = try rtmpsServer(commonName: "ingest.example.com", names: ["DNS:ingest.example.com"])
        let r = try push(proxy.port, ["--tls-ca-file", certificates.caFile])
        XCTAssertEqual(r.status, 1, r.stderr)
        let errors = errorLines(r.stderr)
        XCTAssertEqual(errors.count, 1, r.stderr)
        XCTAssertTrue(errors.first?.contains("certificate does not name localhost") == true, r.stderr)
        XCTAssertFalse(r.stderr.contains("reconnect attempt"), r.stderr)
        XCTAssertFalse(try nginxSawPublish(nginx), "nothing reached nginx")
    }

    /// A certificate from the trusted CA that has expired: refused like an untrusted one, the
    /// error saying it may be expired, nothing sent.
    func testExpiredCertificateIsRefused() throws {
        let (nginx, proxy, certificates) = try rtmpsServer(days: -1)
        let r = try push(proxy.port, ["--tls-ca-file", certificates.caFile])
        XCTAssertEqual(r.status, 1, r.stderr)
        let errors = errorLines(r.stderr)
        XCTAssertEqual(errors.count, 1, r.stderr)
        XCTAssertTrue(errors.first?.contains("certificate is not trusted") == true && errors.first?.contains("expired") == true, r.stderr)
        XCTAssertFalse(r.stderr.contains("reconnect attempt"), r.stderr)
        XCTAssertFalse(r.stderr.contains(key), r.stderr)
        XCTAssertFalse(try nginxSawPublish(nginx), "nothing reached nginx")
    }

    /// `--tls-insecure`: pushed to the unchecked server, with one warning saying what it risks.
    func testInsecurePushesWithOneWarning() throws {
        let (nginx, proxy, _) = try rtmpsServer()
        let r = try push(proxy.port, ["--tls-insecure"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr.components(separatedBy: "--tls-insecure").count - 1, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("warning: --tls-insecure"), r.stderr)
        nginx.stop()
        XCTAssertEqual(try nginx.recordedFiles().count, 1, "nginx recorded the push")
    }

    /// Options that cannot work are usage errors before anything starts.
    func testBadTLSOptionsAreUsageErrors() throws {
        let missing = try Tools.livemux(["record", "-t", "1", "--tls-ca-file", "\(dir)/none.pem", "-o", "rtmps://localhost/live/k"])
        XCTAssertEqual(missing.status, 64, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("--tls-ca-file \(dir)/none.pem is not a readable file"), missing.stderr)
        let both = try Tools.livemux(["record", "-t", "1", "--tls-ca-file", "/etc/hostname", "--tls-insecure", "-o", "rtmps://localhost/live/k"])
        XCTAssertEqual(both.status, 64, both.stderr)
        let tunnel = try Tools.livemux(["record", "-t", "1", "-o", "rtmpts://localhost/live/k"])
        XCTAssertEqual(tunnel.status, 64, tunnel.stderr)
        XCTAssertTrue(tunnel.stderr.contains("cannot check the certificate of an rtmpts:// server"), tunnel.stderr)
    }
}
