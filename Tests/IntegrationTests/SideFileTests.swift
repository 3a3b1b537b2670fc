import Foundation
import XCTest

/// Files livemux writes beside the media (`--stats FILE`, `report --svg FILE`) follow the output
/// rules, and a failure before the recording starts ends with its `error:` line whatever options
/// came with it (issue 32, items 1 and 2).
final class SideFileTests: TemporaryDirectoryTestCase {
    let short = ["-q", "--no-realtime", "-t", "0.3", "--size", "160x120"]

    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
    func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir).sorted() }

    /// `--stats` used to crash with SIGILL (its timer released unresumed) on every one of these,
    /// before the `error:` line; the stats file was created (or truncated) first.
    func testEveryFailureBeforeTheStartEndsWithItsErrorLine() throws {
        let stats = "\(dir)/s.jsonl"
        let busy = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(busy) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(busy, $0, length) } }
        XCTAssertEqual(listen(busy, 1), 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(busy, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let cases: [(args: [String], mentions: String)] = [
            (["record", "-t", "1", "-o", "\(dir)/nodir/x.flv"], "create the directory first"),
            (["record", "-t", "1", "--video", "v4l2:/dev/video-missing", "-o", "\(dir)/x.flv"], "v4l2:/dev/video-missing"),
            (["record", "-t", "1", "--input", "\(dir)/missing.flv", "-o", "\(dir)/x.flv"], "missing.flv"),
            (["record", "-t", "1", "-o", "foo://example/x"], "no protocol for it"),
            (["serve", "--listen", "127.0.0.1:\(port)", "-t", "1"], "Address already in use"),
        ]
        for (args, mentions) in cases {
            for statsArgs in [[], ["--stats", stats], ["--stats", "-"]] {
                let r = try Tools.livemux(args + statsArgs, timeout: 20)
                XCTAssertEqual(r.status, 1, "\(args + statsArgs): \(r.stderr)")
                let lines = r.stderr.split(separator: "\n")
                XCTAssertEqual(lines.count, 1, "\(args + statsArgs): \(r.stderr)")
                XCTAssertTrue(r.stderr.hasPrefix("error: ") && r.stderr.contains(mentions), "\(args + statsArgs): \(r.stderr)")
                XCTAssertEqual(try files(), [], "\(args + statsArgs): nothing created")
            }
        }
    }

    func testStatsFileFollowsTheOutputRules() throws {
        let recording = "\(dir)/rec.flv", fresh = "\(dir)/fresh.flv"
        XCTAssertEqual(try Tools.livemux(["record"] + short + ["-o", recording]).status, 0)
        let before = try XCTUnwrap(contents(recording))
        let refused: [(args: [String], error: String)] = [
            (["-o", fresh, "--stats", recording], "error: \(recording) exists (add -y to overwrite)"),
            (["-n", "-o", fresh, "--stats", recording], "error: \(recording) exists (-n: not overwriting)"),
            (["-o", recording, "-y", "--stats", recording], "error: -o \(recording) and --stats \(recording) name the same file: give --stats a file of its own"),
            (["--input", recording, "-o", fresh, "--stats", recording, "-y"],
             "error: --stats \(recording) is also the input: writing it would destroy the input; choose another file"),
            (["-o", fresh, "--stats", dir], "error: --stats \(dir) is a directory: give a file name such as \(dir)/stats.jsonl"),
        ]
        for (args, error) in refused {
            let r = try Tools.livemux(["record"] + short + args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr, error + "\n", "\(args)")
            XCTAssertEqual(contents(recording), before, "\(args): the recording is untouched")
            XCTAssertFalse(FileManager.default.fileExists(atPath: fresh), "\(args): nothing created")
        }
        // -y replaces it, as it would an output.
        let stats = "\(dir)/s.jsonl"
        try "old\n".write(toFile: stats, atomically: true, encoding: .utf8)
        XCTAssertEqual(try Tools.livemux(["record"] + short + ["-o", fresh, "--stats", stats]).status, 64)
        XCTAssertEqual(contents(stats), Data("old\n".utf8))
        let r = try Tools.livemux(["record"] + short + ["-y", "-o", fresh, "--stats", stats])
        XCTAssertEqual(r.status, 0, r.stderr)
        let last = try XCTUnwrap(String(decoding: try XCTUnwrap(contents(stats)), as: UTF8.self).split(separator: "\n").last)
        XCTAssertTrue(last.contains("\"final\":true"), String(last))
    }

    /// What a directory holds: every name, with what a link points to or a file's bytes.
    func snapshot(_ directory: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let path = "\(directory)/\(name)"
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                entries[name] = "link to \(target)"
            } else {
                entries[name] = contents(path).map { "\($0.count) bytes, \($0.hashValue)" } ?? "unreadable"
            }
        }
        return entries
    }

    /// Issue 42, item 5: `--segment-list l.txt --stats l.txt` created both files before the second
    /// was refused, and a duplicate output through a dangling link exited 1 leaving an empty file.
    /// Every way two options can name one file (one spelling or another, a symbolic link, a
    /// dangling one, a hard link, a segment's name) is refused with one usage `error:` line naming
    /// both options and the fix, and the directory is left exactly as it was.
    func testEveryNameCollisionIsRefusedBeforeAnythingIsCreated() throws {
        let segmented = ["--segment-time", "1"]
        // Each case gets its own directory, made by `prepare`; `error` is the whole error line.
        let cases: [(name: String, prepare: (String) throws -> Void, args: (String) -> [String], error: (String) -> String)] = [
            ("two spellings of one output", { _ in }, { d in ["-o", "\(d)/a.flv", "-o", "\(d)/./a.flv"] },
             { d in "-o \(d)/a.flv and -o \(d)/./a.flv name the same file: give each -o its own file" }),
            ("--segment-list and --stats", { _ in }, { d in segmented + ["-o", "\(d)/seg%03d.flv", "--segment-list", "\(d)/l.txt", "--stats", "\(d)/l.txt"] },
             { d in "--segment-list \(d)/l.txt and --stats \(d)/l.txt name the same file: give --stats a file of its own" }),
            ("--stats through a dangling link to the output",
             { d in try FileManager.default.createSymbolicLink(atPath: "\(d)/s.jsonl", withDestinationPath: "a.flv") },
             { d in ["-y", "-o", "\(d)/a.flv", "--stats", "\(d)/s.jsonl"] },
             { d in "-o \(d)/a.flv and --stats \(d)/s.jsonl name the same file: give --stats a file of its own" }),
            ("two outputs, one a dangling link to the other",
             { d in try FileManager.default.createSymbolicLink(atPath: "\(d)/link.flv", withDestinationPath: "\(d)/target.flv") },
             { d in ["-y", "-o", "\(d)/link.flv", "-o", "\(d)/target.flv"] },
             { d in "-o \(d)/link.flv and -o \(d)/target.flv name the same file: give each -o its own file" }),
            ("--stats a hard link to the output",
             { d in
                 try "old".write(toFile: "\(d)/a.flv", atomically: false, encoding: .utf8)
                 try FileManager.default.linkItem(atPath: "\(d)/a.flv", toPath: "\(d)/hard.jsonl")
             },
             { d in ["-y", "-o", "\(d)/a.flv", "--stats", "\(d)/hard.jsonl"] },
             { d in "-o \(d)/a.flv and --stats \(d)/hard.jsonl name the same file: give --stats a file of its own" }),
            ("--segment-list through a link to --stats",
             { d in try FileManager.default.createSymbolicLink(atPath: "\(d)/list", withDestinationPath: "s.jsonl") },
             { d in segmented + ["-y", "-o", "\(d)/seg%03d.flv", "--segment-list", "\(d)/list", "--stats", "\(d)/s.jsonl"] },
             { d in "--segment-list \(d)/list and --stats \(d)/s.jsonl name the same file: give --stats a file of its own" }),
            ("--stats named as a segment", { _ in }, { d in segmented + ["-o", "\(d)/seg%03d.flv", "--stats", "\(d)/seg001.flv"] },
             { d in "--stats \(d)/seg001.flv is the name of a segment -o '\(d)/seg%03d.flv' writes: give --stats a file of its own" }),
            ("an output that is a hard link to the input",
             { d in
                 try "media".write(toFile: "\(d)/in.flv", atomically: false, encoding: .utf8)
                 try FileManager.default.linkItem(atPath: "\(d)/in.flv", toPath: "\(d)/out.flv")
             },
             { d in ["--input", "\(d)/in.flv", "-y", "-o", "\(d)/out.flv"] },
             { d in "-o \(d)/out.flv is also the input: writing it would destroy the input; choose another file" }),
            ("an output through a dangling link, without -y",
             { d in try FileManager.default.createSymbolicLink(atPath: "\(d)/link.flv", withDestinationPath: "\(d)/nowhere.flv") },
             { d in ["-o", "\(d)/link.flv"] },
             { d in "-o \(d)/link.flv is a link to \(d)/nowhere.flv, where no file is yet: add -y to create it through the link, or give another name" }),
            ("--stats on stdout beside -o -", { _ in }, { _ in ["-f", "flv", "-o", "-", "--stats", "/dev/stdout"] },
             { _ in "-o - and --stats /dev/stdout name the same file: give --stats a file of its own" }),
        ]
        for (index, c) in cases.enumerated() {
            let d = "\(dir)/case\(index)"
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: false)
            try c.prepare(d)
            let before = try snapshot(d)
            let r = try Tools.livemux(["record"] + short + c.args(d), timeout: 30)
            XCTAssertEqual(r.status, 64, "\(c.name): \(r.stderr)")
            XCTAssertEqual(r.stderr, "error: \(c.error(d))\n", c.name)
            XCTAssertEqual(try snapshot(d), before, "\(c.name): nothing created or changed")
        }
        // With -y, a dangling link is written through: the file it names is created.
        let d = "\(dir)/through"
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: "\(d)/link.flv", withDestinationPath: "made.flv")
        let r = try Tools.livemux(["record"] + short + ["-y", "-o", "\(d)/link.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThan(contents("\(d)/made.flv")?.count ?? 0, 0, "the link's target holds the recording")
    }

    func testReportSVGFollowsTheOutputRules() throws {
        let recording = "\(dir)/rec.flv", svg = "\(dir)/t.svg"
        XCTAssertEqual(try Tools.livemux(["record"] + short + ["-o", recording]).status, 0)
        let before = try XCTUnwrap(contents(recording))
        let own = try Tools.livemux(["report", recording, "--svg", recording])
        XCTAssertEqual(own.status, 64)
        XCTAssertEqual(own.stderr, "error: --svg \(recording) is also the input: writing it would destroy the input; choose another file\n")
        XCTAssertEqual(own.stdout.count, 0, "refused before reading")
        XCTAssertEqual(contents(recording), before)
        XCTAssertEqual(try Tools.livemux(["report", recording, "--svg", svg]).status, 0)
        let first = try XCTUnwrap(contents(svg))
        XCTAssertTrue(String(decoding: first, as: UTF8.self).contains("<svg"))
        try "mine".write(toFile: svg, atomically: true, encoding: .utf8)
        let again = try Tools.livemux(["report", recording, "--svg", svg])
        XCTAssertEqual(again.status, 64)
        XCTAssertEqual(again.stderr, "error: \(svg) exists (add -y to overwrite)\n")
        XCTAssertEqual(contents(svg), Data("mine".utf8))
        XCTAssertEqual(try Tools.livemux(["report", recording, "--svg", svg, "-y"]).status, 0)
        XCTAssertEqual(contents(svg), first, "-y replaced it")
        let nowhere = try Tools.livemux(["report", recording, "--svg", "\(dir)/no/such/t.svg"])
        XCTAssertEqual(nowhere.status, 64)
        XCTAssertEqual(nowhere.stderr, "error: cannot create the --svg file '\(dir)/no/such/t.svg': \(dir)/no/such is not a directory (create it first)\n")
        XCTAssertEqual(nowhere.stdout.count, 0, "refused before reading")
    }
}
