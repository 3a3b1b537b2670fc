import Foundation
import XCTest

/// Output files as ffmpeg treats them: `-y` overwrites, `-n` and the default refuse an existing
/// file (exit 64, nothing created or truncated), a name that disagrees with `-f` warns once, and
/// a container livemux does not write is named as such (issue 18, items 5–7).
final class OutputFileTests: TemporaryDirectoryTestCase {
    let short = ["-q", "--no-realtime", "-t", "0.3", "--size", "160x120"]

    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    func testExistingFileIsRefusedUnlessMinusY() throws {
        let out = "\(dir)/a.asf", fresh = "\(dir)/fresh.flv"
        XCTAssertEqual(try Tools.livemux(["record"] + short + ["-o", out]).status, 0)
        let before = try XCTUnwrap(contents(out))
        for flags in [[], ["-n"]] {
            let r = try Tools.livemux(["record"] + short + flags + ["-o", fresh, "-o", out])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertEqual(r.stderr, flags.isEmpty ? "error: \(out) exists (add -y to overwrite)\n" : "error: \(out) exists (-n: not overwriting)\n")
            XCTAssertEqual(contents(out), before, "not truncated")
            XCTAssertFalse(FileManager.default.fileExists(atPath: fresh), "nothing created")
        }
        let r = try Tools.livemux(["record", "-y", "-q", "--no-realtime", "-t", "0.6", "--size", "160x120", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertNotEqual(contents(out), before, "-y overwrote it")
        XCTAssertEqual(try Tools.decodeErrors(out), "")
        XCTAssertEqual(try Tools.livemux(["record", "-y", "-n", "-o", out]).status, 64, "-y and -n contradict")
    }

    func testMuxAndServeFollowTheSameRule() throws {
        let src = "\(dir)/src.asf", out = "\(dir)/out.flv"
        XCTAssertEqual(try Tools.livemux(["record"] + short + ["-o", src]).status, 0)
        XCTAssertEqual(try Tools.livemux(["mux", "-q", "--input", src, "-o", out]).status, 0)
        let before = try XCTUnwrap(contents(out))
        let again = try Tools.livemux(["mux", "-q", "--input", src, "-o", out])
        XCTAssertEqual(again.status, 64)
        XCTAssertEqual(again.stderr, "error: \(out) exists (add -y to overwrite)\n")
        XCTAssertEqual(contents(out), before)
        XCTAssertEqual(try Tools.livemux(["mux", "-q", "-y", "--input", src, "-o", out]).status, 0)
        XCTAssertEqual(try Tools.probe(out).format.format_name, "flv")
        // A device is written, not overwritten: /dev/null needs no -y.
        XCTAssertEqual(try Tools.livemux(["mux", "-q", "--input", src, "-f", "flv", "-o", "/dev/null"]).status, 0)
        // Refused while parsing, before it binds the port.
        let serve = try Tools.livemux(["serve", "--listen", "127.0.0.1:\(Int.random(in: 20000...60000))", "-t", "1", "-o", src])
        XCTAssertEqual(serve.status, 64)
        XCTAssertEqual(serve.stderr, "error: \(src) exists (add -y to overwrite)\n")
    }

    func testContainerThatDisagreesWithTheNameWarnsOnce() throws {
        let flvNamedASF = "\(dir)/x.asf", asfNamedFLV = "\(dir)/y.flv"
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "0.3", "--size", "160x120",
                                   "-f", "flv", "-o", flvNamedASF, "-f", "asf", "-o", asfNamedFLV])
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        XCTAssertEqual(warnings, ["warning: \(flvNamedASF) will hold FLV, but its name says ASF (players may go by the name)",
                                  "warning: \(asfNamedFLV) will hold ASF, but its name says FLV (players may go by the name)"])
        XCTAssertEqual(try Tools.probe(flvNamedASF).format.format_name, "flv")
        XCTAssertEqual(try Tools.probe(asfNamedFLV).format.format_name, "asf")
        let m = try Tools.livemux(["mux", "--input", asfNamedFLV, "-f", "asf", "-o", "\(dir)/z.mp4"])
        XCTAssertEqual(m.status, 0, m.stderr)
        XCTAssertTrue(m.stderr.hasPrefix("warning: \(dir)/z.mp4 will hold ASF, but its name says MP4"), m.stderr)
    }

    /// `-o - -f flv -o fx.asf` wrote ASF to stdout and FLV into fx.asf with only a warning, while
    /// the README teaches `-o - -f flv` (issue 32, item 5): refused before anything is written.
    func testAnFBetweenTwoOutputsThatCouldBeMisreadIsRefused() throws {
        let piped = "\(dir)/piped", fx = "\(dir)/fx.asf"
        let r = try Tools.livemux(["record"] + short + ["-o", "-", "-f", "flv", "-o", fx], stdoutTo: piped)
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("error: -f flv between -o - and -o \(fx) would apply to \(fx)"), r.stderr)
        XCTAssertTrue(r.stderr.contains("For stdout write -f flv -o -;"), r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertEqual(contents(piped), Data(), "nothing on stdout")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fx), "nothing created")
        // What the error suggests, and the README's trailing -f, do what they say.
        let good = try Tools.livemux(["record"] + short + ["-f", "flv", "-o", "-", "-o", fx], stdoutTo: piped)
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertEqual(try Tools.probe(piped).format.format_name, "flv")
        XCTAssertEqual(try Tools.probe(fx).format.format_name, "asf")
        let trailing = try Tools.livemux(["record"] + short + ["-y", "-o", fx, "-o", "-", "-f", "flv"], stdoutTo: piped)
        XCTAssertEqual(trailing.status, 0, trailing.stderr)
        XCTAssertEqual(try Tools.probe(piped).format.format_name, "flv")
        XCTAssertEqual(try Tools.probe(fx).format.format_name, "asf")
    }

    func testContainersLivemuxDoesNotWriteAreNamed() throws {
        for command in ["record", "mux"] {
            let input = command == "mux" ? ["--input", "\(dir)/missing.mp4"] : []
            let mp4 = try Tools.livemux([command] + input + ["-o", "\(dir)/out.mp4"])
            XCTAssertEqual(mp4.status, 64)
            XCTAssertEqual(mp4.stderr, "error: cannot write \(dir)/out.mp4: MP4 is not a container livemux writes; "
                           + "it writes ASF (.asf, .wmv) and FLV (.flv): rename it, or add -f asf or -f flv\n")
            let unknown = try Tools.livemux([command] + input + ["-o", "\(dir)/out.bin"])
            XCTAssertEqual(unknown.status, 64, "\(command) refuses a name without a container, as record does")
            XCTAssertTrue(unknown.stderr.contains("cannot tell the container of '\(dir)/out.bin'"), unknown.stderr)
        }
    }

    /// `mux --help` used to promise ASF for any other name, which mux refused.
    func testMuxHelpSaysWhatMuxDoes() throws {
        let help = try Tools.livemux(["mux", "--help"]).stdoutText
        XCTAssertFalse(help.contains("else asf"), help)
        XCTAssertTrue(help.contains("any other name needs -f"), help)
        let record = try Tools.livemux(["record", "--help"]).stdoutText
        XCTAssertTrue(record.contains("any other name needs -f"), record)
        let src = "\(dir)/src.asf"
        XCTAssertEqual(try Tools.livemux(["record"] + short + ["-o", src]).status, 0)
        let piped = "\(dir)/piped"
        XCTAssertEqual(try Tools.livemux(["mux", "-q", "--input", src, "-o", "-"], stdoutTo: piped).status, 0)
        XCTAssertEqual(try Tools.probe(piped).format.format_name, "asf", "stdout: ASF, as the help says")
    }
}
