import POSIX

/// A lane's bit rate as the control API sets it (`PATCH /api/outputs/ID`): the encoder's thread
/// applies a new one before its next frame.
final class BitRateDial: BitRateTarget {
    private let state: Locked<(asked: Int, applied: Int)>

    init(_ bitRate: Int) { state = Locked((bitRate, bitRate)) }

    func set(_ bitRate: Int) { state.withLock { $0.asked = bitRate } }

    func takeChange() -> Int? {
        state.withLock { s in
            guard s.asked != s.applied else { return nil }
            s.applied = s.asked
            return s.applied
        }
    }

    /// The rate asked for: the lane takes it before its next frame, so this is what an answer says.
    var current: Int { state.withLock { $0.asked } }
}
