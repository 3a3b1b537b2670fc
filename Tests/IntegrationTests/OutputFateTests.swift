import Foundation
import XCTest

/// One output of several dies (issue 38): the progress line goes on for those still writing and
/// shows the dead one's state (`out1=failed`), and the last `--stats` line says `failed: why` for
/// it and `finished` for every output that was completed, never `writing`. The progress line
/// froze at the moment the first output given died (its time, size and bit rate were measured on
/// it alone), and the last line kept every finished output in `writing`.
final class OutputFateTests: TemporaryDirectoryTestCase {
    /// Bytes the reader of stdout takes before it goes away: about a second of the stream.
    static let bytesBeforeTheReaderLeaves = 200_000
    static let seconds = 5.0

    /// `-o -` (first) and a file; stdout's reader leaves after a second. Run on a pseudo-terminal
    /// (`script`), where the progress line is rewritten every half second.
    func testTheProgressLineGoesOnWhenTheFirstOutputDies() throws {
        let out = "\(dir)/a.flv", stats = "\(dir)/s.jsonl", run = "\(dir)/run.sh"
        try """
            "$1" record -t \(Self.seconds) --size 160x120 --stats "$2" -f flv -o - -o "$3" | head -c \(Self.bytesBeforeTheReaderLeaves) > /dev/null
            exit ${PIPESTATUS[0]}
            """.write(toFile: run, atomically: true, encoding: .utf8)
        let r = try Tools.run("script", ["-qfec", "bash \(run) \(Tools.livemux) \(stats) \(out)", "/dev/null"], timeout: 60)
        XCTAssertEqual(r.status, 1, r.stdoutText)
        let terminal = r.stdoutText.replacingOccurrences(of: "\r\n", with: "\n")
        XCTAssertTrue(terminal.contains("warning: output stdout stopped: stdout was closed by its reader"), terminal)
        // The progress lines after the output died: each one rewritten in place after a \r.
        let afterDeath = try XCTUnwrap(terminal.components(separatedBy: "stdout was closed by its reader").dropFirst().first, terminal)
        let lines = afterDeath.components(separatedBy: "\r").filter { $0.hasPrefix("time=") }
        XCTAssertGreaterThan(lines.count, 4, terminal)
        let times = lines.compactMap(Self.mediaSeconds)
        XCTAssertEqual(times.count, lines.count, "\(lines)")
        XCTAssertGreaterThanOrEqual(times.last ?? 0, Self.seconds - 0.1, "the time goes on to the end: \(lines)")
        XCTAssertGreaterThan(Set(times).count, 3, "the time moves after the output died: \(lines)")
        XCTAssertTrue(lines.allSatisfy { $0.contains(" out1=failed") }, "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("out2=") }, "an output writing is not named: \(lines)")

        let last = try XCTUnwrap(try TimingTests.statsLines(stats).last)
        XCTAssertEqual(last["final"] as? Bool, true)
        XCTAssertEqual(try XCTUnwrap(last["media_time_s"] as? Double), Self.seconds, accuracy: 0.1, "\(last)")
        let states = try XCTUnwrap(last["output_states"] as? [String: String], "\(last)")
        XCTAssertEqual(states, ["stdout": "failed: stdout was closed by its reader", out: "finished"])
        XCTAssertEqual(try StatsSchemaTests.validate(stats, in: dir).status, 0)
        XCTAssertEqual(try Tools.probe(out).format.seconds ?? 0, Self.seconds, accuracy: 0.1)
    }

    /// A file on a filesystem that fills up (a 1 MiB tmpfs: 2 s of 4 Mbit/s) beside a file elsewhere,
    /// the first output given: the run goes on, measured on the second.
    func testAFullDiskFailsItsOutputAlone() throws {
        let small = "\(dir)/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mount = try Tools.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", small])
        guard mount.status == 0 else { throw XCTSkip("cannot mount a tmpfs here: \(mount.stderr)") }
        defer { _ = try? Tools.run("/usr/bin/umount", [small]) }
        let full = "\(small)/a.flv", kept = "\(dir)/b.asf", stats = "\(dir)/s.jsonl"
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "10", "--size", "640x360", "--vbitrate", "4M",
                                   "--stats", stats, "-o", full, "-o", kept], timeout: 60 * Tools.slowdown)
        XCTAssertEqual(r.status, 1, r.stderr)
        let last = try XCTUnwrap(try TimingTests.statsLines(stats).last)
        XCTAssertEqual(try XCTUnwrap(last["media_time_s"] as? Double), 10, accuracy: 0.1, "measured on the output that went on: \(last)")
        let states = try XCTUnwrap(last["output_states"] as? [String: String], "\(last)")
        XCTAssertEqual(states[kept], "finished", "\(states)")
        XCTAssertTrue(states[full]?.hasPrefix("failed: ") == true && states[full]?.contains("the disk is full") == true, "\(states)")
        XCTAssertEqual(try StatsSchemaTests.validate(stats, in: dir).status, 0)
        XCTAssertEqual(try Tools.probe(kept).format.seconds ?? 0, 10, accuracy: 0.2)
    }

    /// A file that fills its disk beside a push with an encode of its own (`EncodePlan`):
    /// the file's session loses its every output, and the recording is measured on the push's from
    /// there (its frames, media time and bytes stood still at the moment the disk was full).
    func testAPushGoesOnBeingMeasuredWhenTheLocalOutputsAreGone() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let small = "\(dir)/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mount = try Tools.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", small])
        guard mount.status == 0 else { throw XCTSkip("cannot mount a tmpfs here: \(mount.stderr)") }
        defer { _ = try? Tools.run("/usr/bin/umount", [small]) }
        let server = try RTMPServer(directory: dir)
        try server.start()
        defer { server.stop() }
        let full = "\(small)/a.flv", stats = "\(dir)/s.jsonl", push = "rtmp://127.0.0.1:\(server.port)/live/key"
        let r = try Tools.livemux(["record", "-q", "-t", "\(Self.seconds)", "--size", "640x360", "--vbitrate", "4M",
                                   "--stats", stats, "-o", full, "-o", push], timeout: 60 * Tools.slowdown)
        XCTAssertEqual(r.status, 1, r.stderr)
        let lines = try TimingTests.statsLines(stats)
        let last = try XCTUnwrap(lines.last)
        XCTAssertEqual(try XCTUnwrap(last["media_time_s"] as? Double), Self.seconds, accuracy: 0.1, "\(last)")
        let video = try XCTUnwrap(last["video"] as? [String: Any])
        XCTAssertEqual(try XCTUnwrap(video["packets_out"] as? Int), Int(Self.seconds * 30), accuracy: 2, "\(video)")
        let states = try XCTUnwrap(last["output_states"] as? [String: String], "\(last)")
        XCTAssertTrue(states[full]?.hasPrefix("failed: ") == true, "\(states)")
        XCTAssertEqual(states["rtmp://127.0.0.1:\(server.port)/live/****"], "finished", "\(states)")
        // Every line a second goes on: the media time grows in each after the first.
        let times = lines.dropLast().compactMap { $0["media_time_s"] as? Double }
        XCTAssertEqual(times, times.sorted(), "\(times)")
        XCTAssertEqual(Set(times).count, times.count, "no line stands still: \(times)")
    }

    /// The seconds of `time=HH:MM:SS.ss` at the start of a progress line.
    static func mediaSeconds(_ line: String) -> Double? {
        guard let field = line.split(separator: " ").first, field.hasPrefix("time=") else { return nil }
        let parts = field.dropFirst(5).split(separator: ":").compactMap { Double($0) }
        guard parts.count == 3 else { return nil }
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }
}
