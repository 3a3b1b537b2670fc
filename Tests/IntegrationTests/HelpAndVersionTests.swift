import Foundation
import XCTest

/// `livemux help COMMAND` and `livemux --version` (issue 18, item 8).
final class HelpAndVersionTests: XCTestCase {
    func testHelpForACommandIsThatCommandsHelp() throws {
        for command in ["record", "serve", "mux", "report", "repair", "devices", "ctl"] {
            let viaHelp = try Tools.livemux(["help", command]), viaFlag = try Tools.livemux([command, "--help"])
            XCTAssertEqual(viaHelp.status, 0, command)
            XCTAssertEqual(viaHelp.stdoutText, viaFlag.stdoutText, command)
            XCTAssertTrue(viaHelp.stdoutText.hasPrefix("USAGE: livemux \(command)"), viaHelp.stdoutText)
        }
        let general = try Tools.livemux(["help"])
        XCTAssertEqual(general.stdoutText, try Tools.livemux(["--help"]).stdoutText)
        let unknown = try Tools.livemux(["help", "bogus"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertEqual(unknown.stderr, "error: no help for 'bogus' (commands: record, serve, mux, report, repair, devices, ctl; see livemux --help)\n")
    }

    /// The versions printed are those ffprobe (the same Debian libraries) reports at run time.
    func testVersionNamesTheLibrariesAndEncoders() throws {
        let r = try Tools.livemux(["--version"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        let lines = r.stdoutText.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("livemux ") == true, r.stdoutText)
        let probe = try Tools.run("ffprobe", ["-version"]).stdoutText
        let release = try XCTUnwrap(probe.split(separator: " ").dropFirst(2).first, probe)
        XCTAssertTrue(lines.contains("FFmpeg \(release), run-time libraries:"), r.stdoutText)
        for library in ["libavutil", "libavcodec", "libavformat", "libavdevice", "libavfilter", "libswscale", "libswresample"] {
            // ffprobe: "libavutil      57. 28.100 / 57. 28.100" (built with / running).
            let row = try XCTUnwrap(probe.split(separator: "\n").first { $0.hasPrefix(library + " ") }, library)
            let running = row.split(separator: "/").last!.replacingOccurrences(of: " ", with: "")
            XCTAssertTrue(lines.contains("  \(library) \(running)"), "\(library) \(running) in \(r.stdoutText)")
        }
        let encoders = try Tools.run("ffmpeg", ["-hide_banner", "-encoders"]).stdoutText
        for name in ["libx264", "libx265", "aac"] {
            let found = encoders.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first == Substring(name) }
            XCTAssertTrue(lines.contains { $0.hasSuffix(": \(name) " + (found ? "found" : "NOT FOUND")) }, "\(name): \(r.stdoutText)")
        }
    }
}
