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

    /// An AAC frame (ms): what the mix may add to capture → bytes latency.
    static let aacFrame = 1024.0 / 48
    /// The second microphone as a source, on the second daemon when it has one of its own.
    static func secondSource(_ rig: DeviceRig) -> [String] {
        ["--audio", "pulse:\(DeviceRig.secondMicrophone)"]
            + (rig.second == .ownDaemon ? ["--audio-opt", "server=unix:\(rig.secondSocketPath)"] : [])
    }

    /// Each train's onsets (s) in the recorded mix: two band-passes at its pitch (the other train
    /// is 30 dB down), so the first sample above half its loudest is its onset.
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

    /// a1's entry in a `--stats` line.
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
        let between = trains.between
        print("two microphones: first train \(Self.describe(first)); second train \(Self.describe(second));"
              + " second − first \(Self.describe(between)) ms; peaks a0 \(Self.source("a0", in: run.stats)?["peak_dbfs"] ?? "?")"
              + " a1 \(Self.source("a1", in: run.stats)?["peak_dbfs"] ?? "?") dBFS; drift corrections \(run.stats["drift_corrections"] ?? "?")")
    }
}
