import POSIX

/// Audio is the master clock; video follows its drift, and only its drift.
///
/// Audio frames are stamped from the sample count, so when a microphone's clock runs at 47.98 kHz
/// against the capture clock, the audio timeline slowly moves away from it. The audio encoder
/// reports, for every frame it keeps, where that frame lands on the timeline against when it was
/// captured. That difference is a constant offset (a device's latency, where its first frame
/// fell), steps in it (pulse's stamps move by tens of ms on a loaded machine, a device reopens)
/// and the drift, a rate. The drift is the rate, estimated robustly: the reports are reduced to
/// one median a second, and the rate is the median of the slopes between every two of the
/// last `window` seconds at most `maximumLag` seconds apart (Theil–Sen on near pairs): a step
/// touches only the few pairs that straddle it (15 of some 300), so it cannot move the median,
/// where pairs of every distance let one step in mid-window move it. While the window still holds the first second the drift is the rate times the time
/// since then (so an early estimate a step misled is corrected in full once it is right); later
/// the rate is integrated. An offset, constant or stepping, is never followed
/// (following it once moved video 200 ms late by dropping 6 frames).
///
/// The video encoder shifts its frames by a correction that follows the drift in whole frame
/// steps once the drift is more than half a frame away from it, so the error stays within half a
/// frame either way (after a step the gap is at the other edge, and only the integrated rate, which
/// is smooth, can bring it back), at most one step every `minimumSpacing` frames: a step forward
/// leaves an empty slot, which the encoder fills by duplicating a frame; a step back puts two
/// frames on one slot, and the second is dropped.
///
/// The estimate lives in its lock (`Locked`): the audio and video encoders may run on different
/// threads.
final class ClockDrift: Sendable {
    private struct Estimate {
        /// The current second's reports (timeline − capture, µs) and its start (µs after the base).
        private var current: [Double] = []
        private var currentStart: Double?
        /// One (time, median difference) per past second, the last `window` of them.
        private var seconds: [(time: Double, difference: Double)] = []
        /// The rate (µs of drift per µs) and the drift integrated from it (µs).
        private var rate: Double?
        private var drift: Double = 0
        private var integratedTo: Double?
        private var firstTime: Double?
        /// The latest second's median difference (µs): offset + drift.
        private var latest: Double = 0
        /// The shift (µs) applied to video frames: a whole number of frame durations.
        private var applied: Int64 = 0
        private var steps = 0
        /// Video frames since the last step.
        private var framesSinceStep = Int.max

        mutating func audioObserved(timeline: Int64, captured: Int64) {
            let t = Double(captured)
            let start = currentStart ?? t
            currentStart = start
            if t - start >= ClockDrift.second, !current.isEmpty {
                closeSecond(at: start + ClockDrift.second / 2)
                currentStart = t
            }
            current.append(Double(timeline - captured))
            if firstTime == nil { firstTime = t }
            if let rate, let first = firstTime {
                if let from = integratedTo {
                    drift += rate * (t - from)
                    integratedTo = t
                } else {
                    drift = rate * (t - first)
                }
            }
        }

        /// Reduces the second's reports to their median and estimates the rate again.
        private mutating func closeSecond(at time: Double) {
            latest = Estimate.median(current)
            current.removeAll(keepingCapacity: true)
            seconds.append((time, latest))
            if seconds.count > ClockDrift.window { seconds.removeFirst() }
            guard seconds.count >= ClockDrift.minimumSeconds else { return }
            var slopes: [Double] = []
            slopes.reserveCapacity(seconds.count * ClockDrift.maximumLag)
            for i in seconds.indices {
                for j in seconds.indices where j > i && j - i <= ClockDrift.maximumLag {
                    slopes.append((seconds[j].difference - seconds[i].difference) / (seconds[j].time - seconds[i].time))
                }
            }
            rate = Estimate.median(slopes)
            if seconds.count == ClockDrift.window, integratedTo == nil, let rate, let first = firstTime {
                drift = rate * (time - first)
                integratedTo = time
            }
        }

        static func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }

        mutating func videoCorrection(frameDuration: Double) -> Int64 {
            framesSinceStep = framesSinceStep == .max ? .max : framesSinceStep + 1
            let gap = drift - Double(applied)
            if abs(gap) > ClockDrift.stepAt * frameDuration && framesSinceStep >= ClockDrift.minimumSpacing {
                applied += Int64((gap > 0 ? frameDuration : -frameDuration).rounded())
                steps += 1
                framesSinceStep = 0
            }
            return applied
        }

        var status: Status {
            Status(driftMs: drift / 1000, driftPPM: (rate ?? 0) * 1e6, offsetMs: (latest - Double(applied)) / 1000,
                   corrections: steps)
        }
    }

    private let estimate = Locked(Estimate())

    /// How far (in frames) the drift goes from the correction before the correction steps.
    static let stepAt = 0.5
    /// 15 frames (0.5 s at 30 fps) follow drifts up to ~6%; a crystal is off by far less.
    static let minimumSpacing = 15
    /// Seconds of medians the rate is estimated from…
    static let window = 60
    /// …once there are this many (6 slopes; a 0.5% drift is then 20 ms, under a step).
    static let minimumSeconds = 4
    static let second = 1_000_000.0
    /// Pairs of seconds at most this far apart give slopes.
    static let maximumLag = 5

    /// Audio: a kept frame starts at `timeline` µs on the timeline and was captured `captured` µs
    /// after the timeline's base.
    func audioObserved(timeline: Int64, captured: Int64) {
        estimate.withLock { $0.audioObserved(timeline: timeline, captured: captured) }
    }

    /// Video: the shift (µs) to add to a frame's capture time; moves by one frame when the drift
    /// has gone far enough from it.
    func videoCorrection(frameDuration: Double) -> Int64 { estimate.withLock { $0.videoCorrection(frameDuration: frameDuration) } }

    struct Status: Sendable {
        /// How far the audio clock has drifted from the capture clock (ms): the integrated rate.
        var driftMs: Double
        /// The audio clock's rate against the capture clock (parts per million).
        var driftPPM: Double
        /// Audio − video on the timeline (ms) after the correction: what a viewer would see.
        var offsetMs: Double
        var corrections: Int
    }

    var status: Status { estimate.withLock { $0.status } }
}
