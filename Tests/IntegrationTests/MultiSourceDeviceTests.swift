import Foundation
import XCTest

/// Two microphones mixed into one track on real devices (issue 26, items 5 and 6): the device
/// rig's pipe source `rig_mic` (a0) and a second one, `rig_mic2` (a1), into which the truth source
/// writes a second beep train at another pitch, level and instant (truth-source.c: 2500 Hz,
/// −12 dBFS, 250 ms after each flash; the first: 1000 Hz, −6 dBFS, at the flash). The trains are
/// told apart in the recorded mix by band-pass, and each beep compared with its flash instant.
final class MultiSourceDeviceTests: XCTestCase {
    var rig: DeviceRig?

    override func tearDown() { rig?.stop() }

    private func startRig(_ second: DeviceRig.SecondMicrophone) throws -> DeviceRig {
        let rig = try DeviceRig(second: second)
        self.rig = rig
        return rig
    }

    /// How far (ms) the distance between the two trains may move from one flash to the next: the
    /// mix takes a1 sample after sample beside a0 (an onset is read to a sample, 0.02 ms; AAC and
    /// the band-pass blur it by less). Taken at a0's stamps instead, a1 moved with their wander:
    /// 0.2–0.5 ms a second, and up to 16 ms in the first seconds.
    static let steadyStep = 0.25
    /// Moves larger than that allowed in a recording: a1 delivering later than the mix waits (a
    /// stall on a loaded machine) stays shifted by the delay (AudioSourceInput appends what comes
    /// late within 20 ms): seen in 4 of 13 runs, 0.5–3.9 ms.
    static let allowedSteps = 2
    /// An AAC frame (ms): what the issue lets the mix add to capture → bytes latency.
    static let aacFrame = 1024.0 / 48
    /// How long (ms) the mix waits for a late source at most (`AudioMixer.liveWaitMicroseconds`).
    static let mixWaitBound = 40.0
    /// What packets may take from capture to output (p99, ms) in a recording whose second
    /// microphone is away for 6 s: one microphone's p99 is 85–125 ms here (`--stats`), and the mix
    /// waits 40 ms at most once. Waiting at every frame for a source that is filled 200 ms behind
    /// the clock made it 345 ms.
    static let awayLatencyBound = 250.0
    /// The second microphone as a source, on the second daemon when it has one of its own.
    static func secondSource(_ rig: DeviceRig) -> [String] {
        ["--audio", "pulse:\(DeviceRig.secondMicrophone)"]
            + (rig.second == .ownDaemon ? ["--audio-opt", "server=unix:\(rig.secondSocketPath)"] : [])
    }

    /// Each train's onsets (s) in the recorded mix: two band-passes at its pitch (Q 3: the other
    /// train comes out about 30 dB down), so the first sample above half its loudest is its onset.
    static func onsets(_ path: String, hz: Int) throws -> [Double] {
        let band = "bandpass=f=\(hz):width_type=q:width=3"
        return try SyncAnalysis.beepOnsets(path, rate: 48000, filter: "\(band),\(band)")
    }

    /// Each train's beeps, per flash number: beep − flash (ms), the first train against the
    /// flash, the second against the flash plus its offset; a flash whose beep of that train the
    /// truth source wrote late is left out.
    struct Trains {
        var first: [Int: Double] = [:], second: [Int: Double] = [:]
        /// In flash order.
        var firstOffsets: [Double] { first.sorted { $0.key < $1.key }.map(\.value) }
        var secondOffsets: [Double] { second.sorted { $0.key < $1.key }.map(\.value) }
        /// Second − first (ms) per flash that has both: how far apart the mix put the sources.
        var between: [Double] { first.keys.sorted().compactMap { k in second[k].map { $0 - first[k]! } } }
    }

    static func trains(_ run: DeviceSyncTests.Run) throws -> Trains {
        let first = try onsets(run.path, hz: DeviceRig.beepHz), second = try onsets(run.path, hz: DeviceRig.secondBeepHz)
        let late = run.truth.secondBeepsLate
        var trains = Trains()
        for flash in run.flashes {
            trains.first[flash.number] = DeviceSyncTests.offsets(first, from: [flash.instant])[0]
            if flash.number <= late.count && late[flash.number - 1] <= DeviceSyncTests.truthTolerance {
                trains.second[flash.number] = DeviceSyncTests.offsets(second, from: [flash.instant + DeviceRig.secondBeepOffset])[0]
            }
        }
        return trains
    }

    static func describe(_ values: [Double]) -> String { values.map { String(format: "%.1f", $0) }.joined(separator: " ") }

    /// The entry of the source labelled `label` in a `--stats` line.
    static func source(_ label: String, in line: [String: Any]) -> [String: Any]? {
        (line["sources"] as? [[String: Any]])?.first { $0["label"] as? String == label }
    }

    /// Screen + two microphones for 20 s: both trains in the mix, every beep within a frame of its
    /// flash, no drift correction, and each source's meter at its own train's level.
    func testTwoMicrophonesInSync() throws {
        let rig = try startRig(.sameDaemon)
        let seconds = DeviceSyncTests.seconds
        let run = try DeviceSyncTests.record(on: rig, seconds: seconds, arguments: Self.secondSource(rig))
        let trains = try Self.trains(run)
        let (first, second) = (trains.firstOffsets, trains.secondOffsets)
        XCTAssertGreaterThanOrEqual(first.count, Int(seconds) - 3, "first train: \(first)")
        XCTAssertGreaterThanOrEqual(second.count, Int(seconds) - 3, "second train: \(second)")
        DeviceSyncTests.assertWithinAFrame(first)
        DeviceSyncTests.assertWithinAFrame(second)
        XCTAssertEqual(run.stats["drift_corrections"] as? Int, 0)
        try DeviceSyncTests.assertNoGaps(run.path, frames: Int(seconds * 30))
        // Each source's meter at its own train's level: the last whole second of each holds a beep
        // (100 ms every 1.02 s). A swapped or silent meter reads the other level or −100.
        let lines = run.statsLines.filter { ($0["media_time_s"] as? Double ?? 0) >= 2 }
        XCTAssertGreaterThan(lines.count, 5)
        for (label, level) in [("a0", DeviceRig.beepDBFS), ("a1", DeviceRig.secondBeepDBFS)] {
            let peaks = lines.map { Self.source(label, in: $0)?["peak_dbfs"] as? Double ?? -100 }
            for p in peaks { XCTAssertEqual(p, level, accuracy: 1.5, "\(label)'s peak_dbfs per second: \(peaks)") }
        }
        XCTAssertEqual((run.stats["sources"] as? [[String: Any]])?.map { $0["label"] as? String }, ["v0", "a0", "a1"])
        // The truth source writes both trains in the same chunks: in the mix they keep their
        // distance, whatever each device's stamps do (a0's wander 10 ms and more).
        let between = trains.between
        let steps = zip(between, between.dropFirst()).filter { abs($1 - $0) > Self.steadyStep }.count
        XCTAssertLessThanOrEqual(steps, Self.allowedSteps, "second − first train per flash (ms): \(Self.describe(between))")
        print("two microphones: first train \(Self.describe(first)); second train \(Self.describe(second));"
              + " second − first \(Self.describe(between)) ms; peaks a0 \(Self.source("a0", in: run.stats)?["peak_dbfs"] ?? "?")"
              + " a1 \(Self.source("a1", in: run.stats)?["peak_dbfs"] ?? "?") dBFS; drift corrections \(run.stats["drift_corrections"] ?? "?")")
    }
}

extension MultiSourceDeviceTests {
    /// How far (ms) from its flash every source's beep may be, whatever its place (issue 38).
    static let syncBound = 40.0

    /// Each order of a pulse and an ALSA source (ALSA through pulse: its own clock, its own
    /// stamps) and of the two pulse sources: each train within `syncBound` of its flashes
    /// whatever the source's place (issue 38: a second source was reported 249 ms off with pulse
    /// as a0 and 2 ms as a1).
    func testEveryOrderOfTwoMicrophonesIsInSync() throws {
        let rig = try startRig(.sameDaemon)
        // The ALSA plugin reads pulse's default source (rig_mic) unless PULSE_SOURCE names another.
        let orders: [(a0: String, a1: String, environment: [String: String])] = [
            ("pulse:\(DeviceRig.microphone)", "alsa:pulse", ["PULSE_SOURCE": DeviceRig.secondMicrophone]),
            ("alsa:pulse", "pulse:\(DeviceRig.secondMicrophone)", [:]),
            ("pulse:\(DeviceRig.secondMicrophone)", "pulse:\(DeviceRig.microphone)", [:])]
        for order in orders {
            let run = try DeviceSyncTests.record(on: rig, seconds: 10, audio: order.a0, arguments: ["-y", "--audio", order.a1],
                                                 environment: order.environment)
            let trains = try Self.trains(run)
            let what = "a0 \(order.a0), a1 \(order.a1)"
            XCTAssertGreaterThanOrEqual(trains.first.count, 6, "\(what): first train \(trains.firstOffsets)")
            XCTAssertGreaterThanOrEqual(trains.second.count, 6, "\(what): second train \(trains.secondOffsets)")
            // The last flash's second beep, 250 ms after it, may come after the recording's end.
            for offset in trains.firstOffsets + trains.secondOffsets.dropLast() {
                XCTAssertLessThanOrEqual(abs(offset), Self.syncBound, "\(what): first \(Self.describe(trains.firstOffsets)), second \(Self.describe(trains.secondOffsets))")
            }
            print("orders: \(what): first train \(Self.describe(trains.firstOffsets)); second train \(Self.describe(trains.secondOffsets)) ms")
        }
    }

    /// The daemon of both microphones is killed 3 s in and started again 2 s later: from 2 s
    /// after the return on, both trains are within `syncBound` of their flashes again (issue 38:
    /// the offset was reported to go from −277 to −1003 ms after a restart). The first ~2 s of a
    /// restarted daemon are the rig's pipe sources settling (DeviceFailureTests).
    func testBothMicrophonesAreBackInSyncAfterTheirDaemonRestarts() throws {
        let rig = try startRig(.sameDaemon)
        let run = try DeviceSyncTests.record(on: rig, seconds: 16, arguments: Self.secondSource(rig), gap: 5) { _ in
            usleep(3_000_000)
            rig.killPulse()
            usleep(2_000_000)
            do { try rig.startPulse() } catch { XCTFail("\(error)") }
        }
        let trains = try Self.trains(run)
        // Flashes from 2 s after the return (about 5.5 s in, the truth source's first flash 1 s in).
        let settled = { (train: [Int: Double]) in train.filter { $0.key >= 8 }.sorted { $0.key < $1.key }.map(\.value) }
        // The last flash's second beep, 250 ms after it, may come after the recording's end.
        let (first, second) = (settled(trains.first), Array(settled(trains.second).dropLast()))
        XCTAssertGreaterThanOrEqual(first.count, 5, "first train after the return: \(trains.firstOffsets)")
        XCTAssertGreaterThanOrEqual(second.count, 5, "second train after the return: \(trains.secondOffsets)")
        for offset in first + second {
            XCTAssertLessThanOrEqual(abs(offset), Self.syncBound, "after the return: first \(Self.describe(first)), second \(Self.describe(second))")
        }
        print("daemon restart, two microphones: first train \(Self.describe(trains.firstOffsets)); second train"
              + " \(Self.describe(trains.secondOffsets)) ms; av_offset \(run.stats["av_offset_ms"] ?? "?") ms")
    }
}

extension MultiSourceDeviceTests {
    /// Capture → bytes (DeviceLatencyTests' measure) of the screen and one microphone, and of the
    /// screen and both, recorded side by side (the same devices, the same load). The mix waits
    /// for a1's samples under each a0 frame, up to one of a1's fragments (20 ms) depending on how
    /// their packets fall: +4…+17 ms of p99 measured in 6 runs, under the issue's one AAC frame
    /// (21.3 ms), which the phase of a1's packets leaves too little margin to assert on a loaded
    /// machine (docs/devices.md). Asserted: no more than the mix's bound on waiting for a late
    /// source (`AudioMixer.liveWaitMicroseconds`).
    func testMixLatencyAgainstOneMicrophone() throws {
        let rig = try startRig(.sameDaemon)
        let runs = try DeviceLatencyTests.measure(on: rig, runs: [[], Self.secondSource(rig)])
        let (one, two) = (runs[0], runs[1])
        print(String(format: "mix latency: one microphone p50 %.1f p99 %.1f ms, two p50 %.1f p99 %.1f ms (p99 %+.1f ms; an AAC frame is %.1f ms)",
                     one.p50, one.p99, two.p50, two.p99, two.p99 - one.p99, Self.aacFrame))
        XCTAssertLessThanOrEqual(two.p99 - one.p99, Self.mixWaitBound, "p99 one microphone \(one.p99) ms, two \(two.p99) ms")
    }
}

extension MultiSourceDeviceTests {
    /// The second microphone on a daemon of its own, killed 3 s into 16 s and started again 4.5 s
    /// later, with --device-timeout 2: the recording goes on; a1 is "reopening", then "left out"
    /// (one warning), then taken back ("is back", "live") with its beeps; a0's beeps run on, each
    /// within a frame of its flash, and the audio track has no hole.
    func testSecondMicrophoneIsLeftOutAndTakenBack() throws {
        let rig = try startRig(.ownDaemon)
        let seconds = 16.0, device = "pulse:\(DeviceRig.secondMicrophone)"
        var killed = 0.0, restarted = 0.0
        let run = try DeviceSyncTests.record(on: rig, seconds: seconds, arguments: Self.secondSource(rig) + ["--device-timeout", "2"],
                                             quiet: false) { _ in
            usleep(3_000_000)
            rig.killSecondPulse()
            killed = LatencyTests.monotonicMilliseconds()
            usleep(4_500_000)
            do { try rig.startSecondPulse() } catch { XCTFail("\(error)") }
            restarted = LatencyTests.monotonicMilliseconds()
        }
        XCTAssertEqual(run.result.status, 0, run.result.stderr)
        let messages = DeviceFailureTests.messages(run.result.stderr)
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device '\(device)' failed") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device '\(device)' stayed away 2 s") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device '\(device)' is back after") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.count, 3, "nothing else: \(messages)")
        // a1's states, one per stats line, consecutive repeats merged: live, reopening, left out,
        // live; a0 live throughout.
        let states = { (label: String) in
            run.statsLines.filter { $0["final"] as? Bool != true }.compactMap { Self.source(label, in: $0)?["state"] as? String }
        }
        let a1 = states("a1").reduce(into: [String]()) { merged, s in if merged.last != s { merged.append(s) } }
        XCTAssertEqual(a1, ["live", "reopening", "left out", "live"], "a1 per second: \(states("a1"))")
        XCTAssertEqual(Set(states("a0")), ["live"])
        // Not held back while a1 is away: capture → output p99 over the whole recording.
        let p99 = (run.stats["latency_ms"] as? [String: Any])?["p99"] as? Double ?? .infinity
        XCTAssertLessThan(p99, Self.awayLatencyBound, "capture → output p99 (ms), --stats")
        // The timeline holds, and a0's train is whole: a beep within a frame of every flash kept.
        try DeviceSyncTests.assertNoGaps(run.path, frames: Int(seconds * 30))
        let audio = try DeviceFailureTests.audioPackets(run.path)
        XCTAssertEqual(Double(audio.count) * 1024 / 48000, seconds, accuracy: 0.1, "audio duration")
        XCTAssertEqual(zip(audio, audio.dropFirst()).filter { $1 - $0 > 22 }.count, 0, "audio packets not contiguous (ms): \(audio)")
        XCTAssertEqual(try Tools.decodeErrors(run.path), "")
        let trains = try Self.trains(run)
        XCTAssertGreaterThanOrEqual(trains.first.count, Int(seconds) - 3, "first train: \(trains.firstOffsets)")
        DeviceSyncTests.assertWithinAFrame(trains.firstOffsets)
        // a1's train: there before the kill, absent while it was away (silence in the mix), there
        // again once it is back (the first beeps after a restart may sit off: DeviceFailureTests).
        let heard = trains.second.filter { abs($0.value) < DeviceFailureTests.noBeep }.keys.sorted()
        let gap = zip(heard, heard.dropFirst()).max { $0.1 - $0.0 < $1.1 - $1.0 }
        let unheard = gap.map { $0.1 - $0.0 - 1 } ?? 0
        XCTAssertGreaterThanOrEqual(heard.filter { $0 <= gap?.0 ?? 0 }.count, 1, "second train before the kill: \(heard)")
        XCTAssertGreaterThanOrEqual(unheard, 4, "flashes without a second-train beep while it was away: \(heard)")
        XCTAssertGreaterThanOrEqual(heard.filter { $0 >= gap?.1 ?? .max }.count, 3, "second train after its return: \(heard)")
        let back = run.statsLines.first { ($0["media_time_s"] as? Double ?? 0) > 8 && Self.source("a1", in: $0)?["state"] as? String == "live" }
        print("second microphone away: restarted \(Int(restarted - killed)) ms after the kill; a1 per second \(states("a1"));"
              + " back in the stats at \(back?["media_time_s"] ?? "?") s; latency p99 \(p99) ms; second-train beeps at flashes \(heard) (\(unheard) unheard);"
              + " first train \(Self.describe(trains.firstOffsets)); second \(Self.describe(trains.secondOffsets)); messages \(messages)")
    }

    /// A second microphone plugged in while the show runs (issue 39): `rig_mic2` added through
    /// the control API 4 s into a screen + `rig_mic` recording. Its train is in the mix from then,
    /// every beep within `syncBound` of its flash as if it had been given at the start; the first
    /// train, the screen's timeline and the audio stay whole.
    func testAMicrophoneAddedWhileRecordingIsInSync() throws {
        let rig = try startRig(.sameDaemon)
        let seconds = 14.0, addAt = 4.0
        let key = "device-control-key-0123456789abcdef", keyFile = "\(rig.dir)/control.key"
        try (key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)
        let port = try Network.freePort()
        var answer = "", answeredAt = 0.0
        let run = try DeviceSyncTests.record(on: rig, seconds: seconds, arguments: ["--http", "127.0.0.1:\(port)", "--control-key-file", keyFile]) { _ in
            usleep(UInt32(addAt * 1_000_000))  // the show runs a while before the microphone comes
            let body = #"{"audio": "pulse:\#(DeviceRig.secondMicrophone)"}"#
            let request = "POST /api/sources HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            answer = Network.exchange(port: port, Array(request.utf8))
            let state = Network.exchange(port: port, Array("GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n".utf8))
            let json = state.range(of: "\r\n\r\n").flatMap { try? JSONSerialization.jsonObject(with: Data(state[$0.upperBound...].utf8)) }
            answeredAt = (json as? [String: Any])?["media_time_s"] as? Double ?? -1
        }
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 201"), answer)
        XCTAssertTrue(answer.contains(#""id":"a1""#), answer)
        try DeviceSyncTests.assertNoGaps(run.path, frames: Int(seconds * 30))
        let audio = try DeviceFailureTests.audioPackets(run.path)
        XCTAssertEqual(Double(audio.count) * 1024 / 48000, seconds, accuracy: 0.1, "audio duration")
        XCTAssertEqual(zip(audio, audio.dropFirst()).filter { $1 - $0 > 22 }.count, 0, "audio packets contiguous (ms): \(audio)")
        let trains = try Self.trains(run)
        XCTAssertGreaterThanOrEqual(trains.first.count, Int(seconds) - 3, "first train: \(trains.firstOffsets)")
        DeviceSyncTests.assertWithinAFrame(trains.firstOffsets)
        // a1's beeps: none before it was added, each one after within the bound of its flash.
        let flashes = Dictionary(uniqueKeysWithValues: run.flashes.map { ($0.number, $0.instant) })
        let heard = trains.second.filter { abs($0.value) < DeviceFailureTests.noBeep }
        let before = heard.keys.filter { flashes[$0]! + DeviceRig.secondBeepOffset < answeredAt - 0.1 }
        let after = heard.filter { flashes[$0.key]! + DeviceRig.secondBeepOffset > answeredAt + 0.5 }
        XCTAssertEqual(before, [], "second-train beeps before a1 was added at \(answeredAt) s")
        XCTAssertGreaterThanOrEqual(after.count, Int(seconds - addAt) - 3, "second train after it was added: \(trains.secondOffsets)")
        for (_, offset) in after { XCTAssertLessThanOrEqual(abs(offset), Self.syncBound, "a1's beep − flash (ms): \(trains.secondOffsets)") }
        let a1 = run.statsLines.filter { $0["final"] as? Bool != true }.compactMap { Self.source("a1", in: $0)?["state"] as? String }
        XCTAssertEqual(Set(a1), ["live"], "a1 per second once added: \(a1)")
        print("microphone added live: answered at \(answeredAt) s; second train after it \(Self.describe(after.sorted { $0.key < $1.key }.map(\.value)))"
              + " ms; first train \(Self.describe(trains.firstOffsets)) ms")
    }

    /// A job of synthetic sources counts its times from its own start, a device on the monotonic
    /// clock: the device is refused (409, naming the field), and the job goes on whole.
    func testADeviceIsRefusedByAJobOfSyntheticSources() throws {
        let rig = try startRig(.none)
        let key = "device-control-key-0123456789abcdef", keyFile = "\(rig.dir)/control.key", path = "\(rig.dir)/synthetic.flv"
        try (key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)
        let port = try Network.freePort()
        var answer = ""
        let r = try Tools.run(Tools.livemux, ["record", "-q", "-t", "3", "--size", "320x240", "--http", "127.0.0.1:\(port)", "--control-key-file", keyFile,
                                              "-o", path], environment: rig.environment, timeout: 30) { _ in
            XCTAssertTrue(waitUntil(deadline: 10) { Network.isListening(tcp: port) }, "the job's server listens")
            let body = #"{"audio": "pulse:\#(DeviceRig.microphone)"}"#
            let request = "POST /api/sources HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            answer = Network.exchange(port: port, Array(request.utf8))
        }
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 409"), answer)
        XCTAssertTrue(answer.contains(#""field":"audio""#), answer)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        XCTAssertEqual(try Tools.probe(path).stream("video")?.packetCount, 90)
    }

    /// A second video source (a camera in the corner; here a white X screen of its own, v1 over
    /// the rig's screen, `--layout pip`) whose X server ends 3 s in and starts again 5 s later,
    /// with --device-timeout 2: in the corner its last frame while it is reopened, black once it
    /// is left out (a frozen picture would look live; it stayed white before), itself again once
    /// back; the screen's timeline whole throughout; one warning each for the failure, the
    /// leaving out and the return.
    func testSecondScreenIsLeftOutAndTakenBack() throws {
        let rig = try startRig(.none)
        try rig.startSecondScreen()
        let seconds = 14.0, path = "\(rig.dir)/pip.flv", stats = "\(rig.dir)/pip.jsonl"
        let device = "x11grab:\(rig.secondDisplay)"
        let r = try Tools.run(Tools.livemux, ["record", "-t", String(seconds), "--size", DeviceRig.screenSize, "--fps", "30",
                                              "--video", "x11grab:\(rig.display)", "--video", device, "--layout", "pip", "--no-audio",
                                              "--device-timeout", "2", "--stats", stats, "-o", path],
                              environment: rig.environment, timeout: seconds + 30) { _ in
            usleep(3_000_000)
            rig.killSecondScreen()
            usleep(5_000_000)
            do { try rig.restartSecondScreen() } catch { XCTFail("\(error)") }
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let messages = DeviceFailureTests.messages(r.stderr).filter { $0.hasPrefix("warning:") }
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device '\(device)' failed") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device '\(device)' stayed away 2 s") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("warning: device '\(device)' is back after") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.count, 3, "nothing else: \(messages)")
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        try DeviceSyncTests.assertNoGaps(path, frames: Int(seconds * 30))

        // v1's state on each stats line (media time, s), and when each began.
        let lines = try TimingTests.statsLines(stats).filter { $0["final"] as? Bool != true }
        let states = lines.compactMap { line in
            (line["media_time_s"] as? Double).flatMap { t in (Self.source("v1", in: line)?["state"] as? String).map { (t, $0) } }
        }
        let merged = states.reduce(into: [(Double, String)]()) { m, s in if m.last?.1 != s.1 { m.append(s) } }
        XCTAssertEqual(merged.map(\.1), ["live", "reopening", "left out", "live"], "v1 per second: \(states)")
        guard merged.count == 4 else { return }
        let (reopening, leftOut, back) = (merged[1].0, merged[2].0, merged[3].0)
        // The corner (pip: a quarter of the width, 1/40 margins): its middle half, by luma (16–235).
        let (width, height) = (320, 240)
        let (pipWidth, margin) = (width / 4, width / 40), pipHeight = pipWidth * height / width
        let (x, y) = (width - pipWidth - margin, height - pipHeight - margin)
        let corner = try SyncAnalysis.frameLuma(path, crop: "\(pipWidth / 2):\(pipHeight / 2):\(x + pipWidth / 4):\(y + pipHeight / 4)")
        let span = { (from: Double, to: Double) in corner.filter { $0.time >= from && $0.time < to }.map(\.luma) }
        let (before, frozen, black, after) = (span(0.5, reopening - 1), span(reopening, leftOut - 1), span(leftOut, back - 1), span(back + 1, seconds))
        print("second screen: v1 \(merged.map { "\($0.1) from \($0.0) s" }); corner luma live \(Int(before.min() ?? 0))–\(Int(before.max() ?? 0)),"
              + " reopening \(Int(frozen.min() ?? 0))–\(Int(frozen.max() ?? 0)), left out \(Int(black.min() ?? 0))–\(Int(black.max() ?? 0)),"
              + " back \(Int(after.min() ?? 0))–\(Int(after.max() ?? 0))")
        for (name, values, white) in [("live", before, true), ("reopening", frozen, true), ("left out", black, false), ("back", after, true)] {
            XCTAssertGreaterThan(values.count, 10, "frames while \(name)")
            if white {
                XCTAssertGreaterThan(values.min() ?? 0, 200, "the corner while \(name): \(values)")
            } else {
                XCTAssertLessThan(values.max() ?? .infinity, 40, "the corner while \(name): \(values)")
            }
        }
    }

    /// The first microphone (a0) on the first daemon, killed 2 s in and not started again, with
    /// --device-timeout 2 and a1 alive on its own daemon: the recording ends (exit 1, one error
    /// line naming a0) with a finished file that decodes, and a1's beeps go on in the mix while a0
    /// is filled with silence.
    func testFirstMicrophoneThatStaysAwayEndsTheRecording() throws {
        let rig = try startRig(.ownDaemon)
        try rig.startTruth(seconds: 20)
        let path = "\(rig.dir)/away.flv"
        var failed = 0.0
        let launched = LatencyTests.monotonicMilliseconds()
        let r = try Tools.run(Tools.livemux, ["record", "-q", "-t", "30", "--size", DeviceRig.screenSize, "--fps", "30",
                                              "--video", "x11grab:\(rig.display)", "--audio", "pulse:\(DeviceRig.microphone)"]
                              + Self.secondSource(rig) + ["--device-timeout", "2", "-o", path],
                              environment: rig.environment, timeout: 40) { _ in
            usleep(2_000_000)
            rig.killPulse()
            failed = LatencyTests.monotonicMilliseconds()
        }
        let ended = LatencyTests.monotonicMilliseconds()
        _ = rig.finishTruth()
        XCTAssertEqual(r.status, 1, r.stderr)
        let messages = DeviceFailureTests.messages(r.stderr)
        XCTAssertEqual(messages.count, 1, "\(messages)")
        XCTAssertTrue(messages.first?.hasPrefix("error: device 'pulse:\(DeviceRig.microphone)' went away and stayed away 2 s") == true, "\(messages)")
        XCTAssertLessThan(ended - failed, 6000, "ended \(ended - failed) ms after the failure")
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        let video = try DeviceFailureTests.packets(path, stream: "v"), audio = try DeviceFailureTests.audioPackets(path)
        let videoEnd = Double(video.last ?? 0) / 1000, audioEnd = Double(audio.count) * 1024 / 48000
        XCTAssertEqual(videoEnd, 4, accuracy: 1.5, "2 s recorded, 2 s away")
        XCTAssertEqual(audioEnd, videoEnd, accuracy: 0.3, "audio filled up to the end")
        // a1 in the mix after a0 failed: its beeps 250 ms after each flash, roughly 1 s apart.
        let mediaFailed = (failed - launched - DeviceSyncTests.startup) / 1000
        let second = try Self.onsets(path, hz: DeviceRig.secondBeepHz), first = try Self.onsets(path, hz: DeviceRig.beepHz)
        XCTAssertGreaterThanOrEqual(second.filter { $0 > mediaFailed + 0.3 }.count, 1, "second train after a0 failed at ~\(mediaFailed) s: \(second)")
        XCTAssertEqual(first.filter { $0 > mediaFailed + 0.3 }.count, 0, "a0's silence: \(first)")
        print("first microphone away: ended \(Int(ended - failed)) ms after the failure; video \(videoEnd) s, audio \(audioEnd) s;"
              + " first train at \(first), second at \(second) (a0 failed at ~\(mediaFailed) s)")
    }
}
