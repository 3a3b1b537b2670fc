import Foundation
import XCTest

/// File outputs cut into segments (issue 28): nothing lost or doubled at a cut, each segment a
/// complete file of its own, names from the pattern, the ring, the announcements, and the faults.
final class SegmentTests: TemporaryDirectoryTestCase {
    struct Counts: Equatable {
        var video = 0, audio = 0
    }

    func counts(_ probe: Probe) -> Counts {
        Counts(video: probe.stream("video")?.packetCount ?? 0, audio: probe.stream("audio")?.packetCount ?? 0)
    }

    /// The segments of a `-t 60 --segment-time 10` recording against the same recording unsplit:
    /// six segments, each starting with a keyframe at 0, decoding alone, 10 s long; video frames
    /// adding up exactly, audio within one AAC frame per cut; the concat list playing as one.
    func assertSegmentsAddUp(_ format: String) throws {
        let common = ["record", "-q", "--no-realtime", "-t", "60", "--size", "160x120", "--fps", "30"]
        let whole = "\(dir)/whole.\(format)", list = "\(dir)/list.ffconcat"
        XCTAssertEqual(try Tools.livemux(common + ["-o", whole]).status, 0)
        let r = try Tools.livemux(common + ["--segment-time", "10", "--segment-list", list, "-o", "\(dir)/seg-%03d.\(format)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let segments = (0..<6).map { String(format: "\(dir)/seg-%03d.\(format)", $0) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: String(format: "\(dir)/seg-%03d.\(format)", 6)))
        var sum = Counts()
        for path in segments {
            let probe = try Tools.probe(path, packets: true)
            let c = counts(probe)
            sum.video += c.video
            sum.audio += c.audio
            let video = try XCTUnwrap(probe.stream("video")).index
            let first = try XCTUnwrap(probe.packets?.first { $0.stream_index == video })
            XCTAssertEqual(first.dts, 0, "\(path) starts at 0")
            XCTAssertTrue(first.flags.hasPrefix("K"), "\(path) starts with a keyframe")
            XCTAssertEqual(try XCTUnwrap(probe.format.seconds), 10, accuracy: 0.03, "\(path)'s duration")
            XCTAssertEqual(c.video, 300, path)
            XCTAssertEqual(try Tools.decodeErrors(path), "", "\(path) decodes alone")
        }
        let unsplit = counts(try Tools.probe(whole))
        XCTAssertEqual(sum.video, unsplit.video, "every frame in exactly one segment")
        XCTAssertLessThanOrEqual(abs(sum.audio - unsplit.audio), segments.count - 1, "audio within one frame per cut")
        // The list plays as one: the same packets, and no gap in either stream's decoded frames.
        let concat = try Tools.probe(list, packets: true, extra: ["-f", "concat", "-safe", "0"])
        XCTAssertEqual(counts(concat), sum)
        let frames = try Tools.run("ffprobe", ["-v", "error", "-f", "concat", "-safe", "0", "-i", list, "-show_entries",
                                               "frame=media_type,best_effort_timestamp_time", "-of", "csv=p=0"])
        XCTAssertEqual(frames.status, 0, frames.stderr)
        for (kind, step) in [("video", 1.0 / 30), ("audio", 1024.0 / 48000)] {
            // ffmpeg's ASF reader gives the first video packet after the concat demuxer's seek to
            // `inpoint` no timestamp: such a frame takes the slot after the last one stamped.
            var last: Double?, unstamped = 0, stamped = 0, count = 0
            for line in frames.stdoutText.split(separator: "\n") where line.hasPrefix(kind + ",") {
                count += 1
                guard let t = Double(line.split(separator: ",")[1]) else {
                    unstamped += 1
                    continue
                }
                if let last {
                    XCTAssertEqual(t - last, step * Double(unstamped + 1), accuracy: 0.0015, "\(kind) at \(t) s: no gap, no overlap")
                }
                (last, unstamped, stamped) = (t, 0, stamped + 1)
            }
            XCTAssertEqual(count, kind == "video" ? sum.video : sum.audio, "every \(kind) frame decodes")
            XCTAssertLessThanOrEqual(count - stamped, segments.count, kind)
            XCTAssertEqual(try XCTUnwrap(last), 60 - step, accuracy: step, "\(kind) reaches the end")
        }
    }

    /// An ASF file's header as its trailer leaves it: the File Properties' and the Data Object's
    /// packet counts (which must agree with the Data Object's size), its play duration (100 ns,
    /// with the preroll), and whether the Simple Index Object follows.
    static func asfHeader(_ path: String) throws -> (packets: UInt64, dataPackets: UInt64, packetsInData: UInt64, playSeconds: Double, indexed: Bool) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func find(_ guid: [UInt8]) throws -> Int {
            try XCTUnwrap((0...(bytes.count - guid.count)).first { bytes[$0..<$0 + guid.count].elementsEqual(guid) }, path)
        }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) } }
        let fileProperties = try find([0xA1, 0xDC, 0xAB, 0x8C, 0x47, 0xA9, 0xCF, 0x11, 0x8E, 0xE4, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65])
        let data = try find([0x36, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C])
        let index: [UInt8] = [0x90, 0x08, 0x00, 0x33, 0xB1, 0xE5, 0xCF, 0x11, 0x89, 0xF4, 0x00, 0xA0, 0xC9, 0x03, 0x49, 0xCB]
        let indexed = (0...(bytes.count - 16)).contains { bytes[$0..<$0 + 16].elementsEqual(index) }
        let preroll = Double(u64(fileProperties + 80)) / 1000
        return (u64(fileProperties + 56), u64(data + 40), (u64(data + 16) - 50) / 3200,
                Double(u64(fileProperties + 64)) / 1e7 - preroll, indexed)
    }

    func testASFSegmentsAddUpToTheUnsplitRecording() throws {
        try assertSegmentsAddUp("asf")
        // Each segment's header was finished by its own trailer: true counts, duration and an index.
        for i in 0..<6 {
            let h = try Self.asfHeader(String(format: "\(dir)/seg-%03d.asf", i))
            XCTAssertGreaterThan(h.packets, 0)
            XCTAssertEqual(h.packets, h.dataPackets)
            XCTAssertEqual(h.packets, h.packetsInData)
            XCTAssertEqual(h.playSeconds, 10, accuracy: 0.03)
            XCTAssertTrue(h.indexed, "segment \(i) has its index")
        }
    }
    func testFLVSegmentsAddUpToTheUnsplitRecording() throws { try assertSegmentsAddUp("flv") }

    /// At real time too: three 1 s segments of a 3 s recording hold its 90 frames.
    func testRealTimeSegments() throws {
        let r = try Tools.livemux(["record", "-t", "3", "--size", "160x120", "--gop", "1", "--segment-time", "1",
                                   "-o", "\(dir)/rt-%d.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        var frames = 0
        for i in 0..<3 {
            let probe = try Tools.probe("\(dir)/rt-\(i).flv")
            frames += counts(probe).video
            XCTAssertEqual(try XCTUnwrap(probe.format.seconds), 1, accuracy: 0.03)
            XCTAssertTrue(r.stderr.contains("segment \(dir)/rt-\(i).flv closed: 1.000 s"), r.stderr)
        }
        XCTAssertEqual(frames, 90)
    }

    /// The A/V offset inside each segment is as good as unsplit (avsynctest: within 1 ms). The cuts
    /// (2.25 s, 4.5 s) are away from the beeps (every second): the first AAC frame of a file decodes
    /// without the frame before it (MDCT overlap), so a beep right at a cut, played from that
    /// segment alone, was measured 17–21 ms late.
    func testSegmentsStayInSync() throws {
        let source = "lavfi:avsynctest=size=320x240:framerate=30:samplerate=48000:period=1[out0][out1]"
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "6", "--input", source, "--gop", "0.25",
                                   "--segment-time", "2.25", "-o", "\(dir)/sync-%d.asf"])
        XCTAssertEqual(r.status, 0, r.stderr)
        for i in 0..<3 {
            let path = "\(dir)/sync-\(i).asf"
            let flashes = try SyncAnalysis.flashTimes(path)
            let onsets = try SyncAnalysis.beepOnsets(path, rate: 48000)
            XCTAssertGreaterThanOrEqual(flashes.count, 1, path)
            for flash in flashes {
                let onset = onsets.min { abs($0 - flash) < abs($1 - flash) } ?? .infinity
                XCTAssertLessThanOrEqual(abs(onset - flash) * 1000, 1.0, "\(path): beep \((onset - flash) * 1000) ms from its flash")
            }
        }
    }

    /// `--segment-keep 2`: only the newest two stay, and the list names just them (it played
    /// deleted files before); each closed segment is an event in --stats (valid by the schema)
    /// and a line on stderr.
    func testRingKeepsTheNewestAndStatsNameEverySegment() throws {
        let stats = "\(dir)/s.jsonl", list = "\(dir)/ring.ffconcat"
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "5", "--size", "160x120", "--gop", "1", "--segment-time", "1",
                                   "--segment-keep", "2", "--stats", stats, "--segment-list", list, "-o", "\(dir)/ring-%02d.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("ring-") }.sorted()
        XCTAssertEqual(left, ["ring-03.flv", "ring-04.flv"])
        let text = try String(contentsOfFile: list, encoding: .utf8)
        XCTAssertEqual(text.split(separator: "\n").filter { $0.hasPrefix("file ") }, ["file 'ring-03.flv'", "file 'ring-04.flv'"], text)
        XCTAssertTrue(text.hasPrefix("ffconcat version 1.0\n"), text)
        let concat = try Tools.run("ffmpeg", ["-v", "error", "-f", "concat", "-i", list, "-f", "null", "-"])
        XCTAssertEqual(concat.status, 0, concat.stderr)
        XCTAssertEqual(concat.stderr, "")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }, [], "no temporary list left")
        XCTAssertEqual(r.stderr.components(separatedBy: "closed: ").count - 1, 5, r.stderr)
        let check = try StatsSchemaTests.validate(stats, in: dir)
        XCTAssertEqual(check.status, 0, check.stdoutText + check.stderr)
        let last = try XCTUnwrap(try TimingTests.statsLines(stats).last)
        let closed = try XCTUnwrap(last["segments_closed"] as? [[String: Any]])
        XCTAssertEqual(closed.map { $0["path"] as? String }, (0..<5).map { String(format: "\(dir)/ring-%02d.flv", $0) })
        XCTAssertEqual(closed.map { $0["start_s"] as? Double }, [0, 1, 2, 3, 4])
    }

    /// strftime names; a later segment's name that exists is refused at the start without -y
    /// (SegmentNameTakenTests has the rest): nothing recorded, the file untouched; with -y it is replaced.
    func testNamesFromThePatternNeverOverwriteWithoutY() throws {
        let existing = "\(dir)/n-1.flv"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        let args = ["record", "-q", "--no-realtime", "-t", "3", "--size", "160x120", "--gop", "1", "--segment-time", "1",
                    "-o", "\(dir)/n-%d.flv"]
        let r = try Tools.livemux(args)
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.hasPrefix("error: \(existing) exists"), r.stderr)
        XCTAssertEqual(try String(contentsOfFile: existing, encoding: .utf8), "keep me")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/n-0.flv"))
        XCTAssertEqual(try Tools.livemux(["record", "-y"] + args.dropFirst()).status, 0)
        XCTAssertEqual(try XCTUnwrap(try Tools.probe(existing).format.seconds), 1, accuracy: 0.03)

        let dated = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "1", "--size", "160x120", "--segment-time", "10",
                                       "-o", "\(dir)/d-%Y%m%d-%%.asf"])
        XCTAssertEqual(dated.status, 0, dated.stderr)
        let day = DateFormatter()
        day.dateFormat = "yyyyMMdd"
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("d-") }
        XCTAssertEqual(names, ["d-\(day.string(from: Date()))-%.asf"], "strftime's %d is the day")
    }

    /// A name the cut cannot create (its directory is not there): the error names that path,
    /// the segments closed stay complete, and the other output (stdout) goes on to its end.
    func testNextNameThatCannotBeCreatedStopsOnlyThatOutput() throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/d0", withIntermediateDirectories: false)
        let whole = "\(dir)/whole.asf"
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "3", "--size", "160x120", "--gop", "1",
                                   "--segment-time", "1", "-o", "\(dir)/d%d/seg.flv", "-o", "-"], stdoutTo: whole)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("cannot create \(dir)/d1/seg.flv"), r.stderr)
        XCTAssertTrue(r.stderr.contains("stdout complete"), r.stderr)
        XCTAssertEqual(try XCTUnwrap(try Tools.probe("\(dir)/d0/seg.flv").format.seconds), 1, accuracy: 0.03)
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/d0/seg.flv"), "")
        XCTAssertEqual(counts(try Tools.probe(whole)).video, 90)
    }

    /// The next name on a file system it may not write (a read-only tmpfs; root passes any
    /// permission bits): the same, with the reason.
    func testNextNameOnAReadOnlyFileSystem() throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/d0", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: "\(dir)/d1", withIntermediateDirectories: false)
        let mount = try Tools.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", "\(dir)/d1"])
        guard mount.status == 0 else { throw XCTSkip("cannot mount a tmpfs here: \(mount.stderr)") }
        defer { _ = try? Tools.run("/usr/bin/umount", ["\(dir)/d1"]) }
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "3", "--size", "160x120", "--gop", "1",
                                   "--segment-time", "1", "-o", "\(dir)/d%d/seg.asf", "-o", "-"], stdoutTo: "\(dir)/whole.asf")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("cannot create \(dir)/d1/seg.asf: Read-only file system"), r.stderr)
        XCTAssertEqual(try XCTUnwrap(try Tools.probe("\(dir)/d0/seg.asf").format.seconds), 1, accuracy: 0.03)
        XCTAssertEqual(counts(try Tools.probe("\(dir)/whole.asf")).video, 90)
    }

    /// SIGKILL mid-recording: the closed segments are complete, the open one readable.
    func testSIGKILLLeavesClosedSegmentsComplete() throws {
        let child = try ChildProcess.background(Tools.livemux, ["record", "-t", "30", "--size", "640x360", "--gop", "1",
                                                               "--segment-time", "1", "-o", "\(dir)/k-%d.asf"],
                                                directory: dir, name: "kill")
        // Until the open segment has had a write past its header (the sink gathers 64 KiB).
        func size(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        waitUntil(deadline: 20) { size("\(dir)/k-2.asf") >= 70_000 }
        XCTAssertEqual(child.end(signal: SIGKILL), SIGKILL)
        for i in 0..<2 {
            XCTAssertEqual(try XCTUnwrap(try Tools.probe("\(dir)/k-\(i).asf").format.seconds), 1, accuracy: 0.03)
            XCTAssertEqual(try Tools.decodeErrors("\(dir)/k-\(i).asf"), "")
        }
        XCTAssertGreaterThan(counts(try Tools.probe("\(dir)/k-2.asf")).video, 0, "the open segment reads up to its last write")
    }

    /// `mux` cuts too: a 12 s file (a keyframe every 2 s) in 5 s pieces, cut at its keyframes: 0–6, 6–12.
    func testMuxCutsSegments() throws {
        let source = "\(dir)/src.flv"
        XCTAssertEqual(try Tools.livemux(["record", "-q", "--no-realtime", "-t", "12", "--size", "160x120", "-o", source]).status, 0)
        let r = try Tools.livemux(["mux", "-q", "-i", source, "--segment-time", "5", "-o", "\(dir)/p%03d.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        var frames = 0
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/p002.flv"))
        for (i, seconds) in [6.0, 6].enumerated() {
            let probe = try Tools.probe("\(dir)/p00\(i).flv")
            frames += counts(probe).video
            XCTAssertEqual(try XCTUnwrap(probe.format.seconds), seconds, accuracy: 0.03)
        }
        XCTAssertEqual(frames, 360)
    }

    /// The durations the stderr lines give, in order.
    func closedDurations(_ stderr: String) -> [Double] {
        stderr.split(separator: "\n").compactMap { line in
            line.range(of: " closed: ").flatMap { Double(line[$0.upperBound...].prefix { $0 != " " }) }
        }
    }

    /// `--segment-at-clock` with a 10 s GOP: every cut is on a 3 s wall-clock multiple at a forced
    /// keyframe, so the segments between the first and the last are exactly 3 s, and named so.
    func testClockCutsAreExactWithForcedKeyframes() throws {
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "14", "--size", "160x120", "--gop", "10",
                                   "--segment-time", "3", "--segment-at-clock", "-o", "\(dir)/c-%H%M%S.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let durations = closedDurations(r.stderr)
        XCTAssertGreaterThanOrEqual(durations.count, 5, r.stderr)
        XCTAssertEqual(durations.dropFirst().dropLast().filter { $0 != 3 }, [], r.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        for name in names.dropFirst() {
            XCTAssertEqual(Int(name.dropFirst(6).prefix(2))! % 3, 0, "\(name) starts on a multiple of 3 s")
            let probe = try Tools.probe("\(dir)/\(name)", packets: true)
            let video = try XCTUnwrap(probe.stream("video")).index
            XCTAssertTrue(try XCTUnwrap(probe.packets?.first { $0.stream_index == video }).flags.hasPrefix("K"), name)
        }
    }

    /// SIGUSR1 cuts at once (a forced keyframe), not at the next GOP's keyframe 10 s on.
    func testSIGUSR1CutsAtAForcedKeyframe() throws {
        let r = try Tools.livemux(["record", "-t", "3", "--size", "160x120", "--gop", "10", "--segment-time", "1000",
                                   "-o", "\(dir)/u-%d.flv"]) { child in
            usleep(1_500_000)  // mid-GOP (a keyframe every 10 s): where the cut is asserted
            child.signal(SIGUSR1)
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let durations = closedDurations(r.stderr)
        XCTAssertEqual(durations.count, 2, r.stderr)
        XCTAssertEqual(durations.reduce(0, +), 3, accuracy: 0.001)
        XCTAssertEqual(durations.first ?? 0, 1.2, accuracy: 0.8, "cut about when the signal came")
        let probe = try Tools.probe("\(dir)/u-1.flv", packets: true)
        XCTAssertTrue(try XCTUnwrap(probe.packets?.first).flags.hasPrefix("K"))
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/u-1.flv"), "")
    }

    /// `--segment-size`: a new segment at the first keyframe once a segment holds the size, so each
    /// closed one holds at least that, and at most a GOP more.
    func testSizeCutsAtTheNextKeyframe() throws {
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "10", "--size", "160x120", "--vbitrate", "400k", "--gop", "0.5",
                                   "--segment-size", "100k", "-o", "\(dir)/s-%03d.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        XCTAssertGreaterThanOrEqual(names.count, 3, r.stderr)
        for name in names.dropLast() {
            let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: "\(dir)/\(name)")[.size] as? Int)
            XCTAssertGreaterThanOrEqual(size, 100 * 1024, name)
            XCTAssertLessThan(size, 100 * 1024 + 60_000, "\(name): cut at the keyframe after the size, not later")
            XCTAssertEqual(try Tools.decodeErrors("\(dir)/\(name)"), "")
        }
    }

    /// `--segment-keep-timestamps`: each segment keeps the running timeline, and the list (its
    /// `inpoint`) still plays them as one from 0.
    func testKeepTimestamps() throws {
        let list = "\(dir)/l.ffconcat"
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "-t", "6", "--size", "160x120", "--gop", "1",
                                   "--segment-time", "2", "--segment-keep-timestamps", "--segment-list", list, "-o", "\(dir)/k-%d.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let probe = try Tools.probe("\(dir)/k-1.flv", packets: true)
        let video = try XCTUnwrap(probe.stream("video")).index
        XCTAssertEqual(probe.packets?.first { $0.stream_index == video }?.dts, 2000)
        let concat = try Tools.probe(list, packets: true, extra: ["-f", "concat", "-safe", "0"])
        let times = (concat.packets ?? []).filter { $0.stream_index == video }.compactMap { Double($0.dts_time ?? "") }
        XCTAssertEqual(times.count, 180)
        XCTAssertEqual(times.first, 0)
        XCTAssertEqual(zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 1, 1.0 / 30, accuracy: 0.0015)
    }

    /// The disk fills while segments are cut (a 1 MiB tmpfs): the error names the segment being
    /// written, every closed segment stays complete, and the other output goes on to its end.
    func testFullDiskKeepsClosedSegmentsComplete() throws {
        let small = "\(dir)/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: false)
        let mount = try Tools.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", small])
        guard mount.status == 0 else { throw XCTSkip("cannot mount a tmpfs here: \(mount.stderr)") }
        defer { _ = try? Tools.run("/usr/bin/umount", [small]) }
        let whole = "\(dir)/whole.asf"
        let r = try Tools.livemux(["record", "--no-realtime", "-t", "20", "--size", "160x120", "--vbitrate", "1M", "--gop", "0.5",
                                   "--segment-size", "150k", "-o", "\(small)/f-%02d.flv", "-o", "-"], stdoutTo: whole)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("\(small)/f-") && r.stderr.contains("the disk is full"), r.stderr)
        XCTAssertTrue(r.stderr.contains("stdout complete"), r.stderr)
        XCTAssertEqual(counts(try Tools.probe(whole)).video, 600, "the other output went on to the end")
        let closed = r.stderr.split(separator: "\n").filter { $0.contains(" closed: ") }
        let names = try FileManager.default.contentsOfDirectory(atPath: small).sorted()
        XCTAssertGreaterThanOrEqual(closed.count, 2, r.stderr)
        XCTAssertGreaterThan(names.count, closed.count, "the segment being written when the disk filled stays")
        for name in names.prefix(closed.count) {
            XCTAssertEqual(try Tools.decodeErrors("\(small)/\(name)"), "", name)
            XCTAssertNotNil(try Tools.probe("\(small)/\(name)").format.seconds, name)
        }
    }

    /// What cannot be segmented is one usage error naming the fix.
    func testUsageErrors() throws {
        let cases: [([String], String)] = [
            (["-o", "\(dir)/one.asf"], "each segment needs a name of its own"),
            (["-o", "-"], "segments are cut only from file outputs"),
            (["--segment-list", "\(dir)/l.ffconcat", "-o", "\(dir)/a-%d.asf", "-o", "\(dir)/b-%d.flv"], "--segment-list lists one output's segments"),
        ]
        for (args, message) in cases {
            let r = try Tools.livemux(["record", "-t", "1", "--segment-time", "1"] + args)
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.hasPrefix("error: ") && r.stderr.contains(message), r.stderr)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        }
        // The first segment's name is checked with the other outputs: refused, untouched, exit 64.
        let first = "\(dir)/f-000.asf"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: first))
        let exists = try Tools.livemux(["record", "-t", "1", "--segment-time", "1", "-o", "\(dir)/f-%03d.asf"])
        XCTAssertEqual(exists.stderr, "error: \(first) exists, and -o \(dir)/f-%03d.asf would write segment 0 over it: add -y to overwrite,"
                       + " --segment-start-number 1 to number after the segments there, or give -o another name\n")
        XCTAssertEqual(exists.status, 64)
        XCTAssertEqual(try String(contentsOfFile: first, encoding: .utf8), "mine")
        try FileManager.default.removeItem(atPath: first)
        let r = try Tools.livemux(["record", "-t", "1", "--segment-keep", "3", "-o", "\(dir)/x-%d.asf"])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.contains("need --segment-time or --segment-size"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [])
    }
}
