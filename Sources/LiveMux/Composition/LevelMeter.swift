import Foundation
import POSIX

/// A source's peak level over each second of its capture time: what a streamer watches to know
/// the microphone is live. The capture thread observes, the stats timer reads.
final class LevelMeter: Sendable {
    /// What silence reads as (JSON has no −∞).
    static let floorDBFS = -100.0
    private struct State {
        var second = Int64.min
        var peak = 0.0
        /// The peak of the last whole second.
        var last: Double?
    }
    private let state = Locked(State())

    /// A frame captured at `time` (µs) peaked at `amplitude` (1.0 is full scale).
    func observe(_ amplitude: Double, at time: Int64) {
        let second = time / 1_000_000
        state.withLock { s in
            if second != s.second {
                if s.second != Int64.min { s.last = s.peak }
                (s.second, s.peak) = (second, 0)
            }
            s.peak = max(s.peak, amplitude)
        }
    }

    /// The peak of the last whole second in dBFS, nil before one.
    var dBFS: Double? {
        state.withLock { $0.last }.map { max(Self.floorDBFS, 20 * log10($0)) }
    }
}
