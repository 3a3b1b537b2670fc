import Foundation
import XCTest

/// Reads a recording of the device rig back: flash instants, which truth flash each is.
enum DeviceSyncAnalysis {
    /// The instant (s) of every flash, from the first frame that shows it: its time, less how
    /// long after the flash it was grabbed, which its brightness tells (truth-source.c steps a
    /// flash down from white by 16 every 1/8 of a frame; YAVG is limited range, 16–235).
    static func flashInstants(_ path: String, frame: Double) throws -> [Double] {
        let frames = try SyncAnalysis.frameLuma(path)
        guard !frames.isEmpty else { return [] }
        let median = frames.map(\.luma).sorted()[frames.count / 2]
        var instants: [Double] = []
        var last = -Double.infinity
        for f in frames where f.luma > median + 8 {
            if f.time - last > 0.5 {
                let level = (f.luma - 16) * 255 / 219
                let step = min(8, max(0, ((255 - level) / 16).rounded()))
                instants.append(f.time - (step + 0.5) / 8 * frame)
            }
            last = f.time
        }
        return instants
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
