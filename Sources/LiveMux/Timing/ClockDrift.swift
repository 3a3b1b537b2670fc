import Foundation

/// Audio is the master clock; video follows its drift, and only its drift.
///
/// Audio frames are stamped from the sample count, so when a microphone's clock runs at 47.98 kHz
/// against the capture clock, the audio timeline slowly moves away from it. The audio encoder
/// reports, for every frame it keeps, where that frame lands on the timeline against when it was
/// captured. That difference is a constant offset (a device's latency, where its first frame
/// fell) plus the drift, a rate: the drift is estimated as the slope of a least-squares line
/// through the last `window` of reports and integrated, so a constant offset, however large, is
/// never followed (it once moved video 200 ms late by dropping 6 frames). A report more than
/// `stepThreshold` off the line is a step in the offset (a device reopened, a buffer re-synced):
/// it is taken out of this and later reports, since a rate integrated over a window that holds
/// a step would follow the step in full. The video encoder
/// shifts its frames by a correction that follows the drift in whole frame steps, once the drift is
/// more than 0.6 of a frame away from it (the integrated rate is smooth: a tenth of a frame of
/// hysteresis covers the estimate's noise, and the A/V error stays within 0.6 of a frame), at
/// most one step every `minimumSpacing` frames: a step forward leaves an empty slot, which the encoder fills by duplicating a frame; a
/// step back puts two frames on one slot, and the second is dropped.
///
/// Locking: `lock` guards every field; the audio and video encoders may run on different threads.
final class ClockDrift: @unchecked Sendable {
    private let lock = NSLock()
    /// Recent reports: capture time (µs after the timeline's base) and timeline − capture (µs).
    private var reports: [(time: Double, difference: Double)] = []
    /// The rate (µs of drift per µs), and the drift (µs) integrated from it.
    private var rate: Double?
    private var drift: Double = 0
    private var lastTime: Double?
    private var firstTime: Double?
    /// The least-squares line's value at the latest report (µs): offset + drift.
    private var fitted: Double = 0
    /// The line's slope at the latest report.
    private var fittedSlope: Double = 0
    /// Steps in the offset taken out of the reports (µs).
    private var steppedBy: Double = 0
    /// No device jitters by a frame and a half; a 0.5% drift moves 0.1 ms between reports.
    static let stepThreshold = 50_000.0
    /// The shift (µs) applied to video frames: a whole number of frame durations.
    private var applied: Int64 = 0
    private var steps = 0
    /// Video frames since the last step.
    private var framesSinceStep = Int.max
    /// How far (in frames) the drift goes from the correction before the correction steps.
    static let stepAt = 0.6
    /// 15 frames (0.5 s at 30 fps) follow drifts up to ~6%; a crystal is off by far less.
    static let minimumSpacing = 15
    /// The slope is fitted over this much of the latest reports (µs)…
    static let window = 10_000_000.0
    /// …once they span this much: with ±5 ms of jitter a 4 s fit is good to ~0.02%.
    static let minimumSpan = 4_000_000.0

    /// Audio: a kept frame starts at `timeline` µs on the timeline and was captured `captured` µs
    /// after the timeline's base.
    func audioObserved(timeline: Int64, captured: Int64) {
        let t = Double(captured)
        lock.lock()
        defer { lock.unlock() }
        var d = Double(timeline - captured) - steppedBy
        if let last = lastTime {
            let predicted = fitted + fittedSlope * (t - last)
            if abs(d - predicted) > Self.stepThreshold {
                steppedBy += d - predicted
                d = predicted
            }
        }
        reports.append((t, d))
        if let first = reports.first, t - first.time > Self.window {
            reports.removeFirst(reports.firstIndex { t - $0.time <= Self.window } ?? 0)
        }
        if firstTime == nil { firstTime = t }
        let line = Self.fit(reports)
        (fitted, fittedSlope) = (line.value, line.slope)
        if let known = rate, let last = lastTime {
            drift += known * (t - last)
        } else if line.span >= Self.minimumSpan, let first = firstTime {
            drift = line.slope * (t - first)  // the drift since the first report, at once
        }
        if line.span >= Self.minimumSpan { rate = line.slope }
        lastTime = t
    }

    /// The least-squares line through `reports`: its slope, its value at the last report, and how
    /// long a time the reports span.
    private static func fit(_ reports: [(time: Double, difference: Double)]) -> (slope: Double, value: Double, span: Double) {
        guard let first = reports.first, let last = reports.last else { return (0, 0, 0) }
        let n = Double(reports.count)
        var st = 0.0, sd = 0.0
        for r in reports { st += r.time - first.time; sd += r.difference }
        let mt = st / n, md = sd / n
        var stt = 0.0, std = 0.0
        for r in reports {
            let x = r.time - first.time - mt
            stt += x * x
            std += x * (r.difference - md)
        }
        let slope = stt > 0 ? std / stt : 0
        return (slope, md + slope * (last.time - first.time - mt), last.time - first.time)
    }

    /// Video: the shift (µs) to add to a frame's capture time; moves by one frame when the drift
    /// has gone far enough from it.
    func videoCorrection(frameDuration: Double) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        framesSinceStep = framesSinceStep == .max ? .max : framesSinceStep + 1
        let gap = drift - Double(applied)
        if abs(gap) > Self.stepAt * frameDuration && framesSinceStep >= Self.minimumSpacing {
            applied += Int64((gap > 0 ? frameDuration : -frameDuration).rounded())
            steps += 1
            framesSinceStep = 0
        }
        return applied
    }

    struct Status: Sendable {
        /// How far the audio clock has drifted from the capture clock (ms): the integrated rate.
        var driftMs: Double
        /// The audio clock's rate against the capture clock (parts per million).
        var driftPPM: Double
        /// Audio − video on the timeline (ms) after the correction: what a viewer would see.
        var offsetMs: Double
        var corrections: Int
    }

    var status: Status {
        lock.lock()
        defer { lock.unlock() }
        return Status(driftMs: drift / 1000, driftPPM: (rate ?? 0) * 1e6, offsetMs: (fitted + steppedBy - Double(applied)) / 1000,
                      corrections: steps)
    }
}
