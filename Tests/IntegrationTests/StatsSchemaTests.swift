import Foundation
import XCTest

/// `--stats` lines against docs/stats.schema.json, with Debian's python3-jsonschema (issue 18,
/// item 12): every field named with its unit, nothing undocumented, and a last line that covers
/// the whole run instead of repeating the previous media time with a bit rate of 0.
final class StatsSchemaTests: TemporaryDirectoryTestCase {
    static let validator = """
    import json, sys
    from jsonschema.validators import validator_for
    schema = json.load(open(sys.argv[1]))
    cls = validator_for(schema)
    cls.check_schema(schema)
    v = cls(schema)
    bad = 0
    for n, line in enumerate(open(sys.argv[2]), 1):
        for e in v.iter_errors(json.loads(line)):
            bad += 1
            print(f"line {n}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
    sys.exit(1 if bad else 0)
    """

    func validate(_ stats: String) throws -> Tools.Result { try Self.validate(stats, in: dir) }

    /// Validates every line of `stats` against the schema (the script is written into `dir`).
    static func validate(_ stats: String, in dir: String) throws -> Tools.Result {
        let script = "\(dir)/validate.py"
        try Self.validator.write(toFile: script, atomically: true, encoding: .utf8)
        let schema = Tools.packageRoot.appendingPathComponent("docs/stats.schema.json").path
        return try Tools.run("python3", [script, schema, stats])
    }

    func testStatsLinesMatchTheSchema() throws {
        let stats = "\(dir)/s.jsonl", out = "\(dir)/s.flv"
        let r = try Tools.livemux(["record", "-q", "-t", "2.5", "--size", "160x120", "--stats", stats, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let check = try validate(stats)
        XCTAssertEqual(check.status, 0, check.stdoutText + check.stderr)
        let lines = try TimingTests.statsLines(stats)
        XCTAssertGreaterThanOrEqual(lines.count, 3)
        XCTAssertEqual(lines.map { $0["final"] as? Bool }, Array(repeating: false, count: lines.count - 1) + [true])
        let last = try XCTUnwrap(lines.last)
        let media = try XCTUnwrap(last["media_time_s"] as? Double)
        XCTAssertEqual(media, 2.5, accuracy: 0.1)
        XCTAssertEqual(last["bitrate_interval_s"] as? Double, media, "the final line covers the whole run")
        let video = try XCTUnwrap(last["video"] as? [String: Any])
        let videoBytes = Double(try XCTUnwrap(video["bytes"] as? Int))
        XCTAssertEqual(try XCTUnwrap(video["bitrate_kbps"] as? Double), videoBytes * 8 / media / 1000, accuracy: 0.01)
        let size = Double(try XCTUnwrap(FileManager.default.attributesOfItem(atPath: out)[.size] as? Int))
        XCTAssertEqual(try XCTUnwrap(last["bitrate_kbps"] as? Double), size * 8 / media / 1000, accuracy: size * 8 / media / 1000 * 0.02,
                       "the container's bit rate over the whole run, not 0")
    }

    /// A warning the command line gives before the start (here a name that says another
    /// container) is in the stats too, as the job's own are, even with -q.
    func testCommandLineWarningsAreInTheStats() throws {
        let stats = "\(dir)/s.jsonl"
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "1.5", "--size", "160x120", "--stats", stats, "-f", "flv", "-o", "\(dir)/s.asf"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "-q prints no warning")
        let check = try validate(stats)
        XCTAssertEqual(check.status, 0, check.stdoutText + check.stderr)
        let lines = try TimingTests.statsLines(stats)
        for line in [lines.first, lines.last] {
            let messages = ((line?["warnings"] as? [[String: Any]]) ?? []).compactMap { $0["message"] as? String }
            XCTAssertTrue(messages.contains { $0.contains("s.asf will hold FLV, but its name says ASF") }, "\(String(describing: line))")
        }
    }

    /// Each output's state: a URL output given up while the file goes on is `failed:` with the
    /// reason, in the lines after it stopped, and its connection `given up` under `network`; the
    /// file, complete, is `finished` in the last line (it stayed `writing` there).
    func testAnOutputThatStoppedShowsInTheStates() throws {
        let stats = "\(dir)/s.jsonl", out = "\(dir)/s.flv"
        let url = "tcp://127.0.0.1:\(try Network.freePort())"
        let r = try Tools.livemux(["record", "-q", "-t", "2.5", "--size", "160x120", "--reconnect-attempts", "0",
                                   "--stats", stats, "-o", out, "-o", url])
        XCTAssertEqual(r.status, 1, r.stderr)
        let check = try validate(stats)
        XCTAssertEqual(check.status, 0, check.stdoutText + check.stderr)
        let last = try XCTUnwrap(try TimingTests.statsLines(stats).last)
        let states = try XCTUnwrap(last["output_states"] as? [String: String], "\(last)")
        XCTAssertEqual(states[out], "finished")
        XCTAssertTrue(states[url]?.hasPrefix("failed: ") == true, "\(states)")
        let network = try XCTUnwrap((last["network"] as? [[String: Any]])?.first)
        XCTAssertEqual(network["state"] as? String, "given up", "\(network)")
    }

    /// The validator is real: the old field names fail it.
    func testTheSchemaRejectsUnnamedUnits() throws {
        let stats = "\(dir)/old.jsonl"
        try #"{"media_time": 1.0, "elapsed": 1.0, "speed": 1.0}"#.write(toFile: stats, atomically: true, encoding: .utf8)
        let check = try validate(stats)
        XCTAssertEqual(check.status, 1, check.stdoutText + check.stderr)
        XCTAssertTrue(check.stdoutText.contains("'media_time_s' is a required property"), check.stdoutText)
    }
}
