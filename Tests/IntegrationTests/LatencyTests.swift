import Foundation
import XCTest

/// Capture → bytes latency at real time, measured from outside: the test reads livemux's stdout
/// (FLV) as it comes, notes when each tag's last byte arrives, and compares that with the tag's
/// media time. The time the header arrived stands for media time zero: the mux thread writes the
/// header as the capture threads start, and a paced source captures media time t at start + t.
final class LatencyTests: TemporaryDirectoryTestCase {
    static func monotonicMilliseconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    }

    /// Reads an FLV stream from `fd`, returning (media ms, arrival ms) for every audio and video
    /// tag that carries media (not the sequence headers or the end of sequence), the arrival of the
    /// first bytes, and every byte read.
    static func readFLV(_ fd: Int32) -> (start: Double, tags: [(media: Double, arrival: Double)], bytes: [UInt8]) {
        var buffer: [UInt8] = []
        var offset = 13  // FLV header (9) + PreviousTagSize0 (4)
        var start = -1.0
        var tags: [(Double, Double)] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            let now = monotonicMilliseconds()
            if start < 0 { start = now }
            buffer.append(contentsOf: chunk[0..<n])
            while buffer.count >= offset + 11 {
                let size = Int(buffer[offset + 1]) << 16 | Int(buffer[offset + 2]) << 8 | Int(buffer[offset + 3])
                guard buffer.count >= offset + 11 + size + 4 else { break }
                let type = buffer[offset]
                let ts = Int(buffer[offset + 7]) << 24 | Int(buffer[offset + 4]) << 16 | Int(buffer[offset + 5]) << 8 | Int(buffer[offset + 6])
                // data[1] is the AVC / AAC packet type: 1 is media (0 a sequence header, 2 the end).
                if (type == 8 || type == 9) && size > 1 && buffer[offset + 12] == 1 { tags.append((Double(ts), now)) }
                offset += 11 + size + 4
            }
        }
        return (start, tags, buffer)
    }

    /// Runs livemux with `arguments` (FLV to stdout) and reads its stdout with `readFLV`.
    static func recordFLV(_ arguments: [String], environment: [String: String] = [:]) throws
        -> (start: Double, tags: [(media: Double, arrival: Double)], bytes: [UInt8], status: Int32) {
        let process = try ChildProcess(Tools.livemux, arguments, environment: environment, stdout: .pipe)
        let (start, tags, bytes) = readFLV(process.stdout!.fileDescriptor)
        return (start, tags, bytes, process.wait()!)
    }

    func testReportedP99AgreesWithAReader() throws {
        let stats = "\(dir)/latency.jsonl"
        let (start, tags, _, status) = try Self.recordFLV(["record", "-q", "-t", "4", "--size", "1280x720", "-f", "flv", "-o", "-", "--stats", stats])
        XCTAssertEqual(status, 0)
        XCTAssertGreaterThan(tags.count, 250, "120 video + 188 audio tags")
        let outside = tags.map { $0.arrival - start - $0.media }.sorted()
        let p99 = outside[min(outside.count - 1, Int((0.99 * Double(outside.count)).rounded(.up)) - 1)]
        let p50 = outside[outside.count / 2]
        let last = try XCTUnwrap(TimingTests.statsLines(stats).last)
        let latency = try XCTUnwrap(last["latency_ms"] as? [String: Any])
        let reported99 = try XCTUnwrap(latency["p99"] as? Double), reported50 = try XCTUnwrap(latency["p50"] as? Double)
        print("latency p50/p99 ms: reported \(reported50)/\(reported99), measured by the reader \(p50)/\(p99)")
        XCTAssertEqual(last["latency_packets"] as? Int, tags.count, "one latency per media packet")
        XCTAssertEqual(p99, reported99, accuracy: max(15, reported99 * 0.2), "outside p99 \(p99) vs reported \(reported99)")
        XCTAssertEqual(p50, reported50, accuracy: max(15, reported50 * 0.2))
        XCTAssertLessThan(reported99, 500, "live latency stays well under a second")
    }

    /// At real time the mux queue releases packets on the encoders' promises about their next DTS
    /// (Interleaver) instead of waiting for the other stream's next packet. Those releases must
    /// never put a packet after a later one: ASF aborts on DTS going backwards inside one of its
    /// packets, and ContainerWriter drops (and counts) any packet that would. Both containers,
    /// real time, 720p so that video encoding is slow against audio: nothing dropped, no inversions.
    func testEarlyReleasesDropNothingAndKeepOrder() throws {
        let asf = "\(dir)/live.asf", flv = "\(dir)/live.flv", stats = "\(dir)/order.jsonl"
        let r = try Tools.livemux(["record", "-q", "-t", "2", "--size", "1280x720", "-o", asf, "-o", flv, "--stats", stats])
        XCTAssertEqual(r.status, 0, r.stderr)
        let last = try XCTUnwrap(TimingTests.statsLines(stats).last)
        for kind in ["video", "audio"] {
            let s = try XCTUnwrap(last[kind] as? [String: Any])
            XCTAssertEqual(s["dropped"] as? Int, 0, "\(kind): nothing dropped, nothing late")
        }
        XCTAssertEqual((last["video"] as? [String: Any])?["packets_out"] as? Int, 60)
        for path in [asf, flv] {
            let report = try Tools.livemux(["report", path])
            XCTAssertEqual(report.status, 0, report.stderr)
            XCTAssertTrue(report.stdoutText.contains("no inversions"), report.stdoutText)
            XCTAssertEqual(try Tools.decodeErrors(path), "", path)
        }
    }
}

