import Foundation
import XCTest

/// Faults while running: what was written stays readable.
final class FaultTests: TemporaryDirectoryTestCase {
    /// SIGKILL leaves no chance for a trailer, but the file sink only ever writes whole chunks
    /// (whole ASF packets, whole FLV tags), so the file is readable up to the last one written.
    /// Killed once the file holds 30 video and 50 audio packets, however long a loaded machine
    /// takes to get there (not after a fixed 2.5 s): it then holds at least those, and decodes.
    func testSIGKILLLeavesAReadableFile() throws {
        for format in ["asf", "flv"] {
            let path = "\(dir)/killed.\(format)"
            var seen: (video: Int, audio: Int)?
            _ = try Tools.livemux(["record", "-q", "--size", "320x240", "-o", path], timeout: 60) { process in
                waitUntil(deadline: 30) {
                    if let n = Self.packetsSoFar(path), n.video >= 30, n.audio >= 50 { seen = n }
                    return seen != nil
                }
                process.signal(SIGKILL)
            }
            let before = try XCTUnwrap(seen, "\(format): 30 video and 50 audio packets written within 30 s")
            let p = try Tools.probe(path)
            XCTAssertGreaterThanOrEqual(p.stream("video")?.packetCount ?? 0, before.video, format)
            XCTAssertGreaterThanOrEqual(p.stream("audio")?.packetCount ?? 0, before.audio, format)
            XCTAssertEqual(try Tools.decodeErrors(path), "", "\(format) decodes up to where it stops")
        }
    }

    /// The video and audio packets ffprobe reads in a file being written; nil while it cannot.
    static func packetsSoFar(_ path: String) -> (video: Int, audio: Int)? {
        guard let r = try? Tools.run("ffprobe", ["-v", "error", "-of", "json", "-show_format", "-show_streams", "-count_packets", path]),
              r.status == 0, let p = try? JSONDecoder().decode(Probe.self, from: r.stdout) else { return nil }
        return (p.stream("video")?.packetCount ?? 0, p.stream("audio")?.packetCount ?? 0)
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
