import Foundation

/// Audio is the master clock; video follows it.
///
/// Audio frames are stamped from the sample count, so when a microphone's clock runs at 47.98 kHz
/// against a 30.00 fps camera (both stamped by the one capture clock), the audio timeline slowly
/// moves away from the capture clock. The audio encoder reports, for every frame it keeps, where
/// that frame lands on the timeline against when it was captured; the smoothed difference is the
/// drift. The video encoder shifts its frames by a correction that follows the drift in whole
/// frame steps, once the drift is more than 3/4 of a frame away from it (hysteresis, so jitter
/// does not make it flap), at most one step every `minimumSpacing` frames: a step forward leaves an empty slot, which the encoder fills by
/// duplicating a frame; a step back puts two frames on one slot, and the second is dropped.
///
/// Locking: `lock` guards every field; the audio and video encoders may run on different threads.
final class ClockDrift: @unchecked Sendable {
    private let lock = NSLock()
    /// Smoothed audio timeline position − capture time (µs); nil before audio has been seen.
    private var drift: Double?
    /// The shift (µs) applied to video frames: a whole number of frame durations.
    private var applied: Int64 = 0
    private var steps = 0
    /// Video frames since the last step: steps are at least `minimumSpacing` frames apart, so a
    /// sudden jump (an audio gap) is followed gradually rather than by a burst of drops.
    private var framesSinceStep = Int.max
    /// 15 frames (0.5 s at 30 fps) follow drifts up to ~6%; a crystal is off by far less.
    static let minimumSpacing = 15

    /// Audio: a kept frame starts at `timeline` µs on the timeline and was captured `captured` µs
    /// after the timeline's base.
    func audioObserved(timeline: Int64, captured: Int64) {
        let d = Double(timeline - captured)
        lock.lock()
        // An exponential average over ~32 frames: smooths device jitter, lags a 0.5% drift by ~3 ms.
        drift = drift.map { $0 + (d - $0) / 32 } ?? d
        lock.unlock()
    }

    /// Video: the shift (µs) to add to a frame's capture time; moves by one frame when the drift
    /// has gone far enough from it.
    func videoCorrection(frameDuration: Double) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        framesSinceStep = framesSinceStep == .max ? .max : framesSinceStep + 1
        guard let d = drift else { return applied }
        let gap = d - Double(applied)
        if abs(gap) > 0.75 * frameDuration && framesSinceStep >= Self.minimumSpacing {
            applied += Int64((gap > 0 ? frameDuration : -frameDuration).rounded())
            steps += 1
            framesSinceStep = 0
        }
        return applied
    }

    struct Status: Sendable {
        /// Audio timeline − capture clock (ms): how far the audio clock has drifted.
        var driftMs: Double
        /// Audio − video on the timeline (ms) after the correction: what a viewer would see.
        var offsetMs: Double
        var corrections: Int
    }

    var status: Status {
        lock.lock()
        defer { lock.unlock() }
        let d = drift ?? 0
        return Status(driftMs: d / 1000, offsetMs: (d - Double(applied)) / 1000, corrections: steps)
    }
}
