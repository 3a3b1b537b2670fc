import Foundation
import XCTest

/// `livemux repair` and `report` on recordings cut off by SIGKILL, as a power loss would leave
/// them: no trailer, so no duration, sizes or (ASF) index in the header.
final class RepairTests: TemporaryDirectoryTestCase {
    /// When each recording is killed: seconds after its first media reached the file.
    static let killMoments = [0.7, 2.0, 3.5]
    /// More than any header (ASF's is under 1 KiB, FLV's under 512 bytes): the first media write.
    static let firstMediaBytes = 16 * 1024
    /// How far the repaired duration may be from the media recorded when the process died.
    static let durationTolerance = 1.0

    func testKilledASFIsFlaggedAndRepaired() throws {
        for (n, moment) in Self.killMoments.enumerated() { try killRepairAndCheck(format: "asf", number: n, at: moment) }
    }

    func testKilledFLVIsFlaggedAndRepaired() throws {
        for (n, moment) in Self.killMoments.enumerated() { try killRepairAndCheck(format: "flv", number: n, at: moment) }
    }

    /// Records with the default sources in real time, kills the recorder `moment` seconds after its
    /// first media write, then checks what `report` says of the file and what `repair` makes of it.
    private func killRepairAndCheck(format: String, number: Int, at moment: Double) throws {
        let path = "\(dir)/rec-\(number).\(format)", repaired = "\(dir)/rec-\(number).repaired.\(format)"
        let what = "\(format) killed \(moment) s in"
        let recorder = try ChildProcess.background(Tools.livemux, ["record", "-q", "-o", path], directory: dir, name: "rec-\(number)")
        defer { recorder.end(signal: SIGKILL) }
        // Waits on the file, not the clock: the recorder's start takes longer on a loaded machine.
        waitUntil(deadline: 30) { fileSize(path) >= Self.firstMediaBytes || !recorder.isRunning }
        XCTAssertGreaterThanOrEqual(fileSize(path), Self.firstMediaBytes, "\(what): no media written; \(recorder.stderrFile)")
        let started = Date()
        usleep(useconds_t(moment * 1_000_000))
        let recorded = Date().timeIntervalSince(started)
        recorder.end(signal: SIGKILL, grace: 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let report = try Tools.livemux(["report", path])
        XCTAssertEqual(report.status, 0, "\(what): \(report.stderr)")
        let flagged = report.stdoutText.split(separator: "\n").first { $0.hasPrefix("finalised: NO") }
        XCTAssertNotNil(flagged, "\(what): report does not flag it:\n\(report.stdoutText)")
        XCTAssertTrue(flagged?.contains("no duration") == true, "\(what): \(flagged ?? "")")
        XCTAssertTrue(flagged?.contains("livemux repair \(path)") == true, "\(what): \(flagged ?? "")")

        let repair = try Tools.livemux(["repair", path])
        XCTAssertEqual(repair.status, 0, "\(what): \(repair.stderr)")
        let lines = repair.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "\(what): one summary line: \(repair.stderr)")
        XCTAssertTrue(repair.stderr.hasPrefix("repaired \(path) into \(repaired) "), "\(what): \(repair.stderr)")
        XCTAssertTrue(repair.stderr.contains(" video frames and "), "\(what): \(repair.stderr)")

        // The repair keeps what the killed file held, which is what was recorded up to the kill.
        let probe = try Tools.probe(repaired)
        let duration = try XCTUnwrap(probe.format.seconds, "\(what): the repaired file states a duration")
        XCTAssertEqual(duration, recorded, accuracy: Self.durationTolerance, "\(what): repaired \(duration) s")
        XCTAssertEqual(duration, try lastPacketEnd(path), accuracy: 0.1, "\(what): the repair lost packets the input held")
        XCTAssertEqual(Set(probe.streams.map(\.codec_type)), ["video", "audio"], what)
        XCTAssertEqual(try Tools.decodeErrors(repaired), "", "\(what): the repaired file decodes cleanly")
        let again = try Tools.livemux(["report", repaired])
        XCTAssertFalse(again.stdoutText.contains("finalised: NO"), "\(what): \(again.stdoutText)")

        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "\(what): the input was changed")
    }

    /// What repair refuses, each as one `error:` line that names the fix: a file that is not ASF
    /// or FLV, one that holds its header alone, an output that exists or is the input.
    func testRefusals() throws {
        let svg = "\(dir)/picture.svg"
        try Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>"#.utf8)
            .write(to: URL(fileURLWithPath: svg))
        let notMedia = try Tools.livemux(["repair", svg])
        XCTAssertEqual(notMedia.status, 1)
        XCTAssertTrue(notMedia.stderr.hasPrefix("error: \(svg) is not an ASF or FLV recording"), notMedia.stderr)
        XCTAssertEqual(notMedia.stderr.split(separator: "\n").count, 1, notMedia.stderr)

        let good = "\(dir)/good.asf"
        let r = try Tools.livemux(["record", "--no-realtime", "-q", "-t", "1", "--size", "160x120", "-o", good])
        XCTAssertEqual(r.status, 0, r.stderr)
        // The header object alone: what a recording killed before its first media write holds.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        let headerSize = Int(bytes[16..<24].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let headerOnly = "\(dir)/header.asf"
        try bytes.prefix(headerSize + 50).write(to: URL(fileURLWithPath: headerOnly))
        let empty = try Tools.livemux(["repair", headerOnly])
        XCTAssertEqual(empty.status, 1)
        XCTAssertTrue(empty.stderr.hasPrefix("error: nothing readable in \(headerOnly)"), empty.stderr)
        XCTAssertEqual(empty.stderr.split(separator: "\n").count, 1, empty.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/header.repaired.asf"), "no empty copy is left")

        let first = try Tools.livemux(["repair", good])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stderr.contains("it was finalised already"), first.stderr)
        let exists = try Tools.livemux(["repair", good])
        XCTAssertEqual(exists.status, 64)
        XCTAssertEqual(exists.stderr, "error: \(dir)/good.repaired.asf exists (add -y to overwrite)\n")
        XCTAssertEqual(try Tools.livemux(["repair", good, "-y"]).status, 0)
        // A name that says another container is refused, as record refuses it (issue 52, item 12).
        let mp4 = try Tools.livemux(["repair", good, "-o", "\(dir)/out.mp4"])
        XCTAssertEqual(mp4.status, 64)
        XCTAssertEqual(mp4.stderr, "error: cannot write \(dir)/out.mp4: MP4 is not a container livemux writes; the repair is ASF, as \(good) is: name it \(dir)/out.asf\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/out.mp4"))
        let overInput = try Tools.livemux(["repair", good, "-o", good])
        XCTAssertEqual(overInput.status, 64)
        XCTAssertTrue(overInput.stderr.hasPrefix("error: -o \(good) is also the input"), overInput.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: good)), bytes)
    }

    private func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// Where the last packet of the killed file ends (s), by ffprobe: what it holds, read
    /// independently of livemux.
    private func lastPacketEnd(_ path: String) throws -> Double {
        let r = try Tools.run("ffprobe", ["-v", "error", "-of", "csv=p=0", "-show_entries", "packet=pts_time,duration_time", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdoutText.split(separator: "\n").compactMap { line -> Double? in
            let fields = line.split(separator: ",").compactMap { Double($0) }
            return fields.count == 2 ? fields[0] + fields[1] : nil
        }.max() ?? 0
    }
}
