import Foundation
import XCTest

/// Faults while running: what was written stays readable.
final class FaultTests: TemporaryDirectoryTestCase {
    /// SIGKILL leaves no chance for a trailer, but the file sink only ever writes whole chunks
    /// (whole ASF packets, whole FLV tags), so the file is readable up to the last one written.
    func testSIGKILLLeavesAReadableFile() throws {
        for format in ["asf", "flv"] {
            let path = "\(dir)/killed.\(format)"
            _ = try Tools.livemux(["record", "-q", "--size", "320x240", "-o", path], timeout: 30) { process in
                Thread.sleep(forTimeInterval: 2.5)
                process.signal(SIGKILL)
            }
            let p = try Tools.probe(path)
            XCTAssertGreaterThan(p.stream("video")?.packetCount ?? 0, 30, format)
            XCTAssertGreaterThan(p.stream("audio")?.packetCount ?? 0, 50, format)
            XCTAssertEqual(try Tools.decodeErrors(path), "", "\(format) decodes up to where it stops")
        }
    }

    /// An input that goes away (a FIFO whose writer closes) ends the recording cleanly.
    func testInputWhoseWriterCloses() throws {
        let fifo = "\(dir)/camera.fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let writer = try ChildProcess("ffmpeg", ["-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30",
                                                 "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "2", "-c:v", "rawvideo",
                                                 "-c:a", "pcm_s16le", "-f", "nut", "-y", fifo])
        let path = "\(dir)/from-fifo.flv"
        let r = try Tools.livemux(["record", "-q", "--input", fifo, "--size", "160x120", "-o", path], timeout: 30)
        writer.wait()
        XCTAssertEqual(r.status, 0, r.stderr)
        let p = try Tools.probe(path)
        XCTAssertEqual(try XCTUnwrap(p.format.seconds), 2, accuracy: 0.3)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
    }
}
