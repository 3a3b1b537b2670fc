import Foundation
import XCTest

/// The start of a recording from live devices (issue 32, item 4): a PulseAudio source whose first
/// packet comes late must not leave the start of the file without audio. The rig's null sink
/// monitor is such a source: while only a stream with a long buffer plays into it, the sink
/// renders in blocks of up to 2 s, so the monitor's first packet comes anywhere up to ~1.8 s after
/// it was opened; before the fix the screen had set zero meanwhile and audio started 0.6–1.2 s in.
final class DeviceStartTests: XCTestCase {
    var rig: DeviceRig!

    override func setUpWithError() throws { rig = try DeviceRig() }
    override func tearDown() { rig?.stop() }

    static let seconds = 3.0
    /// Recordings in the test: the monitor's first packet comes at a random point of the sink's
    /// block, so more than one (0 of 11 recordings started in time before the fix).
    static let runs = 2
    static let aacFrame = 1024.0 / 48000
    /// The tone is looked for from here on (s): the first AAC frame may be silence put before a
    /// first sample that came a few ms after zero, and the next one fades in (its priming packet,
    /// which it overlaps, is dropped).
    static let toneFrom = 3 * aacFrame

    /// The recording (x11grab + a sink's monitor, -t 3): audio starts at zero (its first
    /// packet at most one AAC frame in), lasts -t within 0.1 s, its packets are contiguous, and
    /// the tone played into the sink is there from the start on: the timeline waited for the
    /// monitor's first packet instead of putting silence where its samples were.
    func testAudioCoversTheRecordingFromItsStart() throws {
        try rig.playTone(seconds: 60)
        var report: [String] = []
        for run in 1...Self.runs {
            let path = "\(rig.dir)/start\(run).flv"
            let r = try Tools.run(Tools.livemux, ["record", "-q", "-t", String(Self.seconds), "--size", DeviceRig.screenSize, "--fps", "30",
                                                  "--video", "x11grab:\(rig.display)", "--audio", "pulse:\(DeviceRig.sinkMonitor)", "-o", path],
                                  environment: rig.environment, timeout: 30)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(try Tools.decodeErrors(path), "")
            try DeviceSyncTests.assertNoGaps(path, frames: Int(Self.seconds * 30))
            let audio = try DeviceFailureTests.audioPackets(path)
            let first = Double(audio.first ?? Int.max) / 1000, duration = Double(audio.count) * Self.aacFrame
            XCTAssertLessThanOrEqual(first, Self.aacFrame, "run \(run): first audio packet (s)")
            XCTAssertEqual(duration, Self.seconds, accuracy: 0.1, "run \(run): audio duration (s)")
            let holes = zip(audio, audio.dropFirst()).filter { $1 - $0 > 22 }  // 1024 samples at 48 kHz: 21.3 ms
            XCTAssertEqual(holes.count, 0, "run \(run): audio packets not contiguous (ms): \(holes)")
            let levels = try AudioStartTests.levels(path)
            let typical = DeviceSyncAnalysis.median(levels)
            let quiet = levels.indices.filter { Double($0) * AudioStartTests.window >= Self.toneFrom && levels[$0] < typical / 2 }
            let at = { (i: Int?) in String(format: "%.2f", Double(i ?? 0) * AudioStartTests.window) }
            XCTAssertEqual(quiet.count, 0, "run \(run): \(quiet.count) 10 ms windows without the tone, from \(at(quiet.first)) s to \(at(quiet.last)) s")
            report.append(String(format: "first audio packet %.3f s, audio %.3f s", first, duration))
        }
        print("device start (pulse monitor): " + report.joined(separator: "; "))
    }
}
