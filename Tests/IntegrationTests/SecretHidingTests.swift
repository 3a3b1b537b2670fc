import Foundation
import XCTest

/// Secrets stay out of sight: a stream key given through the environment or a file is not in the
/// process's arguments (what `ps` shows every user), and no key, password or passphrase is in any
/// line livemux writes: messages, FFmpeg's own log (-v), --stats.
final class SecretHidingTests: TemporaryDirectoryTestCase {
    let key = "hiddenK3y0815"

    /// The process's arguments as `ps` reads them, NUL-separated.
    private func commandLine(_ pid: pid_t) -> String {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
    }

    /// Pushes 2 s to nginx with `output` (and `environment`); checks what `ps` saw while it ran,
    /// every line it wrote, and that the key reached nginx.
    private func pushHidingTheKey(output: String, environment: [String: String] = [:]) throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let server = try RTMPServer(directory: dir)
        try server.start()
        let stats = "\(dir)/stats.jsonl"
        var output = output
        if output.hasPrefix("@") {
            let file = String(output.dropFirst())
            let text = try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "PORT", with: "\(server.port)")
            try text.write(toFile: file, atomically: false, encoding: .utf8)
        } else {
            output = output.replacingOccurrences(of: "PORT", with: "\(server.port)")
        }
        var seen = ""
        let r = try Tools.run(Tools.livemux, ["record", "-v", "--size", "160x120", "-t", "2", "--stats", stats, "-o", output],
                              environment: environment, timeout: 30) { child in
            // The stats file is made once the pipeline is built: the run is under way.
            waitUntil(deadline: 10) { FileManager.default.fileExists(atPath: stats) }
            seen = self.commandLine(child.pid)
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(seen.contains("record"), "read the running process's arguments: \(seen)")
        XCTAssertFalse(seen.contains(key), "the key is not in the arguments: \(seen)")
        XCTAssertFalse(r.stderr.contains(key), r.stderr)
        let statsText = try String(contentsOfFile: stats, encoding: .utf8)
        XCTAssertTrue(statsText.contains("live\\/****"), "the output is named, masked (JSON escapes /): \(statsText.prefix(400))")
        XCTAssertFalse(statsText.contains(key))
        server.stop()
        let recorded = try server.recordedFiles()
        XCTAssertTrue(recorded.contains { $0.contains("/\(key)-") }, "nginx got the key: \(recorded)")
    }

    func testKeyFromTheEnvironment() throws {
        try pushHidingTheKey(output: "rtmp://127.0.0.1:PORT/live/${LIVEMUX_TEST_KEY}", environment: ["LIVEMUX_TEST_KEY": key])
    }

    func testURLFromAFile() throws {
        let file = "\(dir)/push.url"
        _ = FileManager.default.createFile(atPath: file, contents: Data("rtmp://127.0.0.1:PORT/live/\(key)\n".utf8),
                                       attributes: [.posixPermissions: 0o600])
        try pushHidingTheKey(output: "@" + file)
    }

    /// Failing outputs are described, retried and given up with their secrets masked, FFmpeg's
    /// own lines (-v) too: RTMP's key and user info, SRT's passphrase, a tcp:// password.
    func testSecretsAreMaskedWhenOutputsFail() throws {
        let port = try Network.freePort()  // nothing listens there
        let outputs = ["rtmp://user:pAssw0rd9@127.0.0.1:\(port)/live/\(key)",
                       "srt://127.0.0.1:\(port)?passphrase=srtPassphrase1234&pbkeylen=16",
                       "tcp://tcpuser:tcpS3cretPw@127.0.0.1:\(port)"]
        let r = try Tools.livemux(["record", "-v", "--size", "160x120", "-t", "1", "--reconnect-attempts", "1", "--reconnect-delay", "0.1"]
                                  + outputs.flatMap { ["-o", $0] }, timeout: 30)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("reconnect attempt 1 of 1"), r.stderr)
        for secret in [key, "pAssw0rd9", "srtPassphrase1234", "tcpS3cretPw", "tcpuser"] {
            XCTAssertFalse(r.stderr.contains(secret), "\(secret) in: \(r.stderr)")
        }
        XCTAssertTrue(r.stderr.contains("passphrase=****"), r.stderr)
    }
}
