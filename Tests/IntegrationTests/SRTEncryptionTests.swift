import Foundation
import XCTest

/// Encrypted SRT to a real listener (`srt-live-transmit` from Debian's srt-tools) that writes what
/// it receives to a file: the right passphrase pushes a stream ffprobe reads back; a wrong one,
/// or none, is refused at once with one error line; the passphrase is never printed.
final class SRTEncryptionTests: TemporaryDirectoryTestCase {
    let passphrase = "srtPass-phrase-2718"

    /// A listener on a free port with the passphrase, writing the stream to `received.flv`.
    private func listener() throws -> (process: ChildProcess, port: Int) {
        let program = "/usr/bin/srt-live-transmit"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: program), "srt-tools missing: run scripts/setup --test")
        let port = try Network.freePort()
        let process = try ChildProcess(program, ["-q", "srt://127.0.0.1:\(port)?mode=listener&passphrase=\(passphrase)&pbkeylen=16", "file://con"],
                                       stdout: .file("\(dir)/received.flv"), stderr: .file("\(dir)/srt.err"))
        XCTAssertTrue(waitUntil(deadline: 5) { Network.isBound(udp: port) }, "srt-live-transmit listens: \(process.stderrFile)")
        return (process, port)
    }

    private func push(_ url: String) throws -> Tools.Result {
        try Tools.livemux(["record", "--size", "160x120", "-t", "2", "--reconnect-delay", "0.1", "-o", url], timeout: 30)
    }

    func testRightPassphrasePushes() throws {
        let (receiver, port) = try listener()
        let r = try push("srt://127.0.0.1:\(port)?passphrase=\(passphrase)&pbkeylen=16")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains(passphrase), r.stderr)
        usleep(300_000)  // SRT holds each packet for its latency (120 ms): the last ones reach the file
        receiver.end(signal: SIGINT)
        let probe = try Tools.probe("\(dir)/received.flv")
        XCTAssertEqual(probe.stream("video")?.codec_name, "h264")
        XCTAssertEqual(probe.stream("audio")?.codec_name, "aac")
        XCTAssertGreaterThan(probe.stream("video")?.packetCount ?? 0, 30, "most of 60 frames arrived")
    }

    func testWrongOrMissingPassphraseIsRefusedAtOnce() throws {
        let (receiver, port) = try listener()
        defer { receiver.end(signal: SIGINT) }
        for url in ["srt://127.0.0.1:\(port)?passphrase=wrong-passphrase-1&pbkeylen=16", "srt://127.0.0.1:\(port)"] {
            let r = try push(url)
            XCTAssertEqual(r.status, 1, r.stderr)
            let errors = r.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
            XCTAssertEqual(errors.count, 1, r.stderr)
            XCTAssertTrue(errors.first?.contains("the SRT peer refused the passphrase") == true, r.stderr)
            XCTAssertFalse(r.stderr.contains("reconnect attempt"), "a refused passphrase is not retried: \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("wrong-passphrase-1"), r.stderr)
            XCTAssertFalse(r.stderr.contains("SRT:RcvQ"), "libsrt's own lines only with -v: \(r.stderr)")
        }
    }
}
