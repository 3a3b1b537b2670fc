import Foundation
import XCTest

/// Reads a recording of the device rig back: flash instants, which truth flash each is.
enum DeviceSyncAnalysis {
    /// The first frame (s) that shows each flash, and the step of the flash's brightness it shows
    /// (truth-source.c steps a flash down from white by 16 every 1/8 of a frame; YAVG is limited
    /// range, 16–235): how long after the flash it was grabbed.
    static func flashFrames(_ path: String) throws -> [(time: Double, step: Int)] {
        let frames = try SyncAnalysis.frameLuma(path)
        guard !frames.isEmpty else { return [] }
        let median = frames.map(\.luma).sorted()[frames.count / 2]
        var firsts: [(time: Double, step: Int)] = []
        var last = -Double.infinity
        for f in frames where f.luma > median + 8 {
            if f.time - last > 0.5 {
                let level = (f.luma - 16) * 255 / 219
                firsts.append((f.time, Int(min(8, max(0, ((255 - level) / 16).rounded())))))
            }
            last = f.time
        }
        return firsts
    }

    /// The flash instant (s) of a first flash frame: its time less how long after the flash it was
    /// grabbed, halfway between the draw of the step it shows and of the next (`drawn`: ms after
    /// the flash, as the truth source did them; nil: as they were due). `period`: a frame (s).
    static func instant(_ frame: (time: Double, step: Int), drawn: [Double]?, period: Double) -> Double {
        var times = drawn?.map { $0 / 1000 } ?? (0...8).map { Double($0) * period / 8 }
        times.append((times.last ?? 0) + period / 8)  // the last step shows up to an eighth later
        let step = min(frame.step, times.count - 2)
        return frame.time - (times[step] + times[step + 1]) / 2
    }

    /// The instant (s) of every flash, from the step its first frame shows, as it was due.
    static func flashInstants(_ path: String, period: Double) throws -> [Double] {
        try flashFrames(path).map { instant($0, drawn: nil, period: period) }
    }

    /// Which truth flash (k ≥ 1, at `truthStart` + k periods, ms) each flash at media time
    /// `media` (ms) is, given media time zero on the monotonic clock to within half a period.
    static func flashNumbers(_ media: [Double], truthStart: Double, roughZero: Double) -> [Int] {
        media.map { Int(((roughZero + $0 - truthStart) / (DeviceRig.truthPeriod * 1000)).rounded()) }
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
