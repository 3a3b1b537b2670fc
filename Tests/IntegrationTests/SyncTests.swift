import Foundation
import XCTest

/// A/V sync measured on the output: `avsynctest` flashes the picture and beeps at the same instants;
/// the recording is decoded by ffmpeg (per-frame luma, raw PCM) and every flash frame's timestamp
/// is compared with the onset of its beep.
final class SyncTests: TemporaryDirectoryTestCase {
    /// Records avsynctest (a beep and flash every second) and returns beep onset − flash time, in
    /// milliseconds, for every flash.
    func offsets(fps: Int, rate: Int, realtime: Bool = false, format: String = "asf", flashDelay: Int = 0,
                 seconds: Double = 3.5) throws -> [Double] {
        let path = "\(dir)/sync-\(fps)-\(rate)-\(realtime)-\(flashDelay).\(format)"
        let source = "lavfi:avsynctest=size=320x240:framerate=\(fps):samplerate=\(rate):period=1:delay=\(flashDelay)[out0][out1]"
        let r = try Tools.livemux(["record", "-q", "-t", String(seconds), "--size", "320x240", "--fps", String(fps),
                                   "--sample-rate", String(rate), "--input", source, "-o", path]
                                  + (realtime ? [] : ["--no-realtime"]))
        XCTAssertEqual(r.status, 0, r.stderr)
        let flashes = try SyncAnalysis.flashTimes(path)
        let onsets = try SyncAnalysis.beepOnsets(path, rate: rate)
        XCTAssertGreaterThanOrEqual(flashes.count, Int(seconds) - 1, "flash frames found: \(flashes)")
        return flashes.map { flash in
            let onset = onsets.min { abs($0 - flash) < abs($1 - flash) } ?? .infinity
            return (onset - flash) * 1000
        }
    }

    func assertInSync(_ offsets: [Double], _ label: String) {
        XCTAssertFalse(offsets.isEmpty, label)
        for o in offsets { XCTAssertLessThanOrEqual(abs(o), 1.0, "\(label): beep onset \(o) ms from its flash frame") }
    }

    func testSync30fps48k() throws { assertInSync(try offsets(fps: 30, rate: 48000), "30 fps 48 kHz") }
    func testSync30fps44k() throws { assertInSync(try offsets(fps: 30, rate: 44100), "30 fps 44.1 kHz") }
    func testSync25fps48k() throws { assertInSync(try offsets(fps: 25, rate: 48000), "25 fps 48 kHz") }
    func testSync25fps44kFLV() throws { assertInSync(try offsets(fps: 25, rate: 44100, format: "flv"), "25 fps 44.1 kHz FLV") }
    func testSyncRealtime() throws {
        assertInSync(try offsets(fps: 30, rate: 44100, realtime: true, seconds: 2.5), "30 fps 44.1 kHz at real time")
    }

    /// The measurement can fail: with `delay=2` the source flashes two frames before its beep,
    /// and the beep is seen 66.7 ms after the flash.
    func testAnalysisSeesAShiftedFlash() throws {
        for o in try offsets(fps: 30, rate: 48000, flashDelay: 2, seconds: 2.5) {
            XCTAssertEqual(o, 2000.0 / 30, accuracy: 1.0)
        }
    }
}

/// Reads a recording back with ffmpeg and ffprobe and finds flashes and beeps.
enum SyncAnalysis {
    /// Timestamps (s) of the frames much brighter than the typical frame.
    static func flashTimes(_ path: String) throws -> [Double] {
        let frames = try frameLuma(path)
        guard !frames.isEmpty else { return [] }
        let median = frames.map(\.luma).sorted()[frames.count / 2]
        return frames.filter { $0.luma > median + 8 }.map(\.time)
    }

    /// Every video frame's timestamp (s) and average luma (ffmpeg's signalstats YAVG).
    static func frameLuma(_ path: String, crop: String? = nil) throws -> [(time: Double, luma: Double)] {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-copyts", "-i", path, "-an", "-vf",
                                         (crop.map { "crop=\($0)," } ?? "") + "signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-", "-f", "null", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        var frames: [(time: Double, luma: Double)] = []
        var time: Double?
        for line in r.stdoutText.split(separator: "\n") {
            if let range = line.range(of: "pts_time:") {
                time = Double(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
            } else if let range = line.range(of: "YAVG="), let t = time, let y = Double(line[range.upperBound...]) {
                frames.append((t, y))
            }
        }
        return frames
    }

    /// Times (s) where a beep starts: the first sample above half the loudest, at least half a
    /// second after the previous beep's last loud sample. Sample 0 is the first audio packet's time.
    /// `filter`: an ffmpeg audio filter applied first (a band-pass picks one pitch of a mix).
    static func beepOnsets(_ path: String, rate: Int, filter: String? = nil) throws -> [Double] {
        let probe = try Tools.run("ffprobe", ["-v", "error", "-of", "csv=p=0", "-select_streams", "a", "-show_entries",
                                              "packet=pts_time", "-read_intervals", "%+#1", path])
        let start = try XCTUnwrap(Double(probe.stdoutText.split(separator: "\n").first ?? ""), "first audio pts")
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-vn", "-ac", "1", "-ar", String(rate)]
                              + (filter.map { ["-af", $0] } ?? []) + ["-f", "s16le", "-acodec", "pcm_s16le", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let samples: [Int16] = r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let peak = samples.map { abs(Int($0)) }.max() ?? 0
        guard peak > 0 else { return [] }
        var onsets: [Double] = []
        var last = -rate
        for (i, s) in samples.enumerated() where abs(Int(s)) * 2 > peak {
            if i - last > rate / 2 { onsets.append(start + Double(i) / Double(rate)) }
            last = i
        }
        return onsets
    }
}
