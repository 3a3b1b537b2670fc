import Foundation
import XCTest

/// Devices that come and go (issue 13, item 5), on the device rig: the PulseAudio daemon killed
/// mid-recording and started again, the X server ended and started again, and a microphone that
/// stays away past `--device-timeout`. The recordings are read back with ffprobe and ffmpeg.
final class DeviceFailureTests: XCTestCase {
    var rig: DeviceRig!

    override func setUpWithError() throws { rig = try DeviceRig() }
    override func tearDown() { rig?.stop() }

    /// A beep further than this (ms) from its flash is not its beep: the flash fell in the gap.
    static let noBeep = 200.0

    /// The daemon is killed 3 s in and started again 2 s later: the recording goes on, the gap
    /// filled with silence, video untouched on its grid; the beeps after the return are within a
    /// frame of their flashes once the restarted daemon has settled.
    func testMicrophoneThatComesBackIsPickedUp() throws {
        let seconds = 14.0
        var killed = 0.0, restarted = 0.0
        let run = try DeviceSyncTests.record(on: rig, seconds: seconds, quiet: false, gap: 5) { _ in
            usleep(3_000_000)
            self.rig.killPulse()
            killed = LatencyTests.monotonicMilliseconds()
            usleep(2_000_000)
            do { try self.rig.startPulse() } catch { XCTFail("\(error)") }
            restarted = LatencyTests.monotonicMilliseconds()
        }
        XCTAssertEqual(run.result.status, 0, run.result.stderr)
        let messages = Self.messages(run.result.stderr)
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device 'pulse:\(DeviceRig.microphone)' failed") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device 'pulse:\(DeviceRig.microphone)' is back after") }.count, 1, "\(messages)")
        XCTAssertFalse(messages.contains { $0.hasPrefix("error:") }, "\(messages)")
        // The timeline holds: every video slot taken, audio continuous over the whole recording.
        try DeviceSyncTests.assertNoGaps(run.path, frames: Int(seconds * 30))
        let audio = try Self.audioPackets(run.path)
        XCTAssertEqual(Double(audio.count) * 1024 / 48000, seconds, accuracy: 0.1, "audio duration")
        let holes = zip(audio, audio.dropFirst()).filter { $1 - $0 > 22 }  // 1024 samples at 48 kHz: 21.3 ms
        XCTAssertEqual(holes.count, 0, "audio packets not contiguous (ms): \(holes)")
        XCTAssertEqual(try Tools.decodeErrors(run.path), "")
        // What filled it, per --stats.
        let devices = try XCTUnwrap(run.stats["devices"] as? [[String: Any]])
        let mic = try XCTUnwrap(devices.last)
        XCTAssertEqual(mic["failures"] as? Int, 1, "\(mic)")
        XCTAssertEqual(mic["reopenings"] as? Int, 1, "\(mic)")
        let filled = mic["audio_filled_s"] as? Double ?? 0, away = mic["away_s"] as? Double ?? 0
        XCTAssertGreaterThan(filled, 1.5, "\(mic)")
        XCTAssertLessThan(filled, away + 0.1, "\(mic)")
        XCTAssertEqual(devices.first?["failures"] as? Int, 0, "the screen did not fail")
        // Sync: the beeps before the gap and from the third after it on within a frame of their
        // flashes; the flashes in the gap have none (silence). The first two beeps after the
        // return are only reported: in the first ~2 s of a restarted daemon the beeps sit up to
        // 360 ms off in the samples pulse delivers (whose stamps advance exactly with their count,
        // and LiveMux passes them on in order): the rig's pipe source settling (docs/devices.md).
        let before = Array(run.offsets.prefix { abs($0) < Self.noBeep })
        let after = Array(run.offsets.reversed().prefix { abs($0) < Self.noBeep }.reversed())
        let unheard = run.offsets.count - before.count - after.count
        XCTAssertGreaterThanOrEqual(unheard, 1, "flashes in the gap: \(run.offsets)")
        XCTAssertGreaterThanOrEqual(after.count, 5, "beeps after the return: \(run.offsets)")
        DeviceSyncTests.assertWithinAFrame(before + after.dropFirst(2))
        let format = { (v: [Double]) in v.map { String(format: "%.1f", $0) }.joined(separator: " ") }
        print("device return (pulse): killed, restarted \(Int(restarted - killed)) ms later; away \(away) s, silence \(filled) s,"
              + " \(unheard) flashes unheard; beep − flash before/after: \(format(run.offsets)); drift corrections"
              + " \(run.stats["drift_corrections"] ?? "?"), audio \(run.stats["audio"] ?? "?"), video \(run.stats["video"] ?? "?")")
    }

    /// The X server ends 2 s in and is back 1.5 s later: the last frame fills the gap, every slot
    /// of the grid holds a frame, and audio (a tone beside it) runs on untouched.
    func testScreenThatComesBackIsPickedUp() throws {
        let seconds = 8.0
        let path = "\(rig.dir)/screen.flv", stats = "\(rig.dir)/screen.jsonl"
        let r = try Tools.run(Tools.livemux, ["record", "-t", String(seconds), "--size", DeviceRig.screenSize, "--fps", "30",
                                              "--video", "x11grab:\(rig.display)", "--stats", stats, "-o", path],
                              environment: rig.environment, timeout: seconds + 30) { _ in
            usleep(2_000_000)
            self.rig.killScreen()
            usleep(1_500_000)
            do { try self.rig.restartScreen() } catch { XCTFail("\(error)") }
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let messages = Self.messages(r.stderr)
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device 'x11grab:\(rig.display)' failed") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device 'x11grab:\(rig.display)' is back after") }.count, 1, "\(messages)")
        try DeviceSyncTests.assertNoGaps(path, frames: Int(seconds * 30))
        XCTAssertEqual(Double(try Self.audioPackets(path).count) * 1024 / 48000, seconds, accuracy: 0.1, "audio duration")
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        let screen = try XCTUnwrap((TimingTests.statsLines(stats).last?["devices"] as? [[String: Any]])?.first)
        XCTAssertEqual(screen["failures"] as? Int, 1, "\(screen)")
        XCTAssertEqual(screen["reopenings"] as? Int, 1, "\(screen)")
        let repeated = screen["video_filled_frames"] as? Int ?? 0
        XCTAssertGreaterThan(repeated, 30, "1.5 s away at 30 fps: \(screen)")
        print("device return (x11grab): away \(screen["away_s"] ?? "?") s, \(repeated) frames repeated")
    }

    /// The daemon is killed 2 s in and not started again: the recording ends at the timeout.
    func testMicrophoneThatStaysAwayEndsTheRecording() throws {
        try assertTimeoutEndsTheRecording("device timeout", cause: "last: ") { self.rig.killPulse() }
    }

    /// The daemon is stopped for good (SIGSTOP): the time away counts from the last packet, so the
    /// 2 s it takes to call it a stall are part of it, and the thread that read the microphone is
    /// still waiting for the daemon when the recording ends.
    func testMicrophoneThatStallsForGoodEndsTheRecording() throws {
        try assertTimeoutEndsTheRecording("device stall for good", cause: "it stalled") { self.rig.pausePulse() }
    }

    /// The microphone fails 2 s into a recording (`fail`) and does not come back: with
    /// --device-timeout 2 the recording ends about 2 s later with exit 1 and one error line naming
    /// the device and `cause`, and what was recorded (both streams to the end, the gap filled)
    /// decodes.
    private func assertTimeoutEndsTheRecording(_ label: String, cause: String, fail: @escaping () -> Void) throws {
        try rig.startTruth(seconds: 20)
        let path = "\(rig.dir)/away.flv"
        var failed = 0.0
        let r = try Tools.run(Tools.livemux, ["record", "-q", "-t", "30", "--size", DeviceRig.screenSize, "--fps", "30",
                                              "--video", "x11grab:\(rig.display)", "--audio", "pulse:\(DeviceRig.microphone)",
                                              "--device-timeout", "2", "-o", path],
                              environment: rig.environment, timeout: 40) { _ in
            usleep(2_000_000)
            fail()
            failed = LatencyTests.monotonicMilliseconds()
        }
        let ended = LatencyTests.monotonicMilliseconds()
        rig.resumePulse()
        _ = rig.finishTruth()
        XCTAssertEqual(r.status, 1, r.stderr)
        let messages = Self.messages(r.stderr)
        XCTAssertEqual(messages.count, 1, "\(messages)")
        let error = messages.first ?? ""
        XCTAssertTrue(error.hasPrefix("error: device 'pulse:\(DeviceRig.microphone)' went away and stayed away 2 s"), error)
        XCTAssertTrue(error.contains(cause) && error.contains("--device-timeout"), error)
        XCTAssertLessThan(ended - failed, 6000, "ended \(ended - failed) ms after the failure")
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        let video = try Self.packets(path, stream: "v"), audio = try Self.audioPackets(path)
        let videoEnd = Double(video.last ?? 0) / 1000, audioEnd = Double(audio.count) * 1024 / 48000
        XCTAssertEqual(videoEnd, 4, accuracy: 1.5, "2 s recorded, 2 s away")
        XCTAssertEqual(audioEnd, videoEnd, accuracy: 0.3, "audio filled up to the end")
        print("\(label): ended \(Int(ended - failed)) ms after the failure; video \(videoEnd) s, audio \(audioEnd) s")
    }

    /// The daemon is stopped (SIGSTOP) 3 s in, as a hung one would be, and goes on 4 s later: no
    /// read fails, pulse just waits. After 2 s without a packet the microphone counts as failed:
    /// the recording goes on with silence, video untouched on its grid, and picks the microphone
    /// up again once the daemon runs.
    func testMicrophoneThatStallsIsRiddenOut() throws {
        let seconds = 14.0
        let run = try DeviceSyncTests.record(on: rig, seconds: seconds, quiet: false, gap: 7) { _ in
            usleep(3_000_000)
            self.rig.pausePulse()
            usleep(4_000_000)
            self.rig.resumePulse()
        }
        XCTAssertEqual(run.result.status, 0, run.result.stderr)
        let messages = Self.messages(run.result.stderr)
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device 'pulse:\(DeviceRig.microphone)' failed (it stalled: nothing read for 2 s)") }.count,
                       1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device 'pulse:\(DeviceRig.microphone)' is back after") }.count, 1, "\(messages)")
        XCTAssertFalse(messages.contains { $0.hasPrefix("error:") }, "\(messages)")
        try DeviceSyncTests.assertNoGaps(run.path, frames: Int(seconds * 30))
        let audio = try Self.audioPackets(run.path)
        XCTAssertEqual(Double(audio.count) * 1024 / 48000, seconds, accuracy: 0.1, "audio duration")
        let holes = zip(audio, audio.dropFirst()).filter { $1 - $0 > 22 }
        XCTAssertEqual(holes.count, 0, "audio packets not contiguous (ms): \(holes)")
        let mic = try XCTUnwrap((run.stats["devices"] as? [[String: Any]])?.last)
        XCTAssertEqual(mic["failures"] as? Int, 1, "\(mic)")
        XCTAssertEqual(mic["reopenings"] as? Int, 1, "\(mic)")
        let filled = mic["audio_filled_s"] as? Double ?? 0, away = mic["away_s"] as? Double ?? 0
        XCTAssertGreaterThan(filled, 2, "4 s stopped: \(mic)")
        XCTAssertLessThan(filled, away + 0.1, "\(mic)")
        // Before the stall the beeps are within a frame of their flashes.
        DeviceSyncTests.assertWithinAFrame(Array(run.offsets.prefix { abs($0) < Self.noBeep }))
        print("device stall (pulse): away \(away) s, silence \(filled) s; beep − flash: "
              + run.offsets.map { String(format: "%.1f", $0) }.joined(separator: " "))
    }

    /// The lines livemux wrote to stderr that are not the progress line.
    static func messages(_ stderr: String) -> [String] {
        stderr.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map(String.init).filter { !$0.hasPrefix("time=") }
    }

    /// The PTS (ms) of every packet of a stream (`v` or `a`), as ffprobe reads them.
    static func packets(_ path: String, stream: String) throws -> [Int] {
        let r = try Tools.run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts", "-of", "csv=p=0", path])
        return r.stdoutText.split(separator: "\n").compactMap { Int($0) }
    }

    static func audioPackets(_ path: String) throws -> [Int] { try packets(path, stream: "a") }
}
