import Foundation
import XCTest

/// valgrind's leak check on the real binary: a short `record` and a short `mux` free everything
/// they made. valgrind finds Swift reference cycles and objects kept alive to the exit, which
/// AddressSanitizer's leak checker does not report as reliably. ~10-20 s under valgrind.
final class LeakTests: TemporaryDirectoryTestCase {
    override func setUpWithError() throws {
        // valgrind cannot run a sanitizer's build (its shadow memory).
        try XCTSkipIf(ProcessInfo.processInfo.environment["LIVEMUX_SANITIZED"] != nil, "valgrind cannot run a sanitized binary")
        try super.setUpWithError()
    }

    /// "definitely lost: N bytes" from valgrind's summary (0 when every block was freed).
    func definitelyLost(_ arguments: [String]) throws -> Int {
        let r = try Tools.run("valgrind", ["--leak-check=full", "--num-callers=30", Tools.livemux] + arguments, timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        if r.stderr.contains("All heap blocks were freed") { return 0 }
        guard let line = r.stderr.split(separator: "\n").first(where: { $0.contains("definitely lost:") }),
              let bytes = line.split(separator: ":").last?.split(separator: " ").first.map({ $0.replacingOccurrences(of: ",", with: "") }),
              let n = Int(bytes) else {
            XCTFail("no leak summary:\n\(r.stderr.suffix(2000))")
            return -1
        }
        if n != 0 { print(r.stderr) }  // the loss records, for whoever fixes it
        return n
    }

    /// With the progress line and --stats, whose timers also held the pipeline to the exit.
    func testRecordFreesEverything() throws {
        let path = "\(dir)/a.asf"
        XCTAssertEqual(try definitelyLost(["record", "-t", "1", "--size", "160x120", "--stats", "\(dir)/stats.jsonl", "-o", path]), 0)
        XCTAssertEqual(try XCTUnwrap(Tools.probe(path).format.seconds), 1, accuracy: 0.2)
    }

    func testMuxFreesEverything() throws {
        let source = "\(dir)/src.mp4", path = "\(dir)/m.flv"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30",
                                            "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "1",
                                            "-c:v", "libx264", "-preset", "veryfast", "-c:a", "aac", source])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(try definitelyLost(["mux", "--input", source, "-o", path]), 0)
        XCTAssertEqual(try XCTUnwrap(Tools.probe(path).format.seconds), 1, accuracy: 0.2)
    }
}
