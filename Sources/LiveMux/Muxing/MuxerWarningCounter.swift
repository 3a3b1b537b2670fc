import POSIX

/// How many packets of each kind a `Muxer` dropped; the first of a kind is told, the rest counted.
final class MuxerWarningCounter: Sendable {
    private let counts = Locked<[MuxerWarning: Int]>([:])

    /// Counts one; true the first time of its kind.
    func count(_ warning: MuxerWarning) -> Bool {
        counts.withLock { counts in
            counts[warning, default: 0] += 1
            return counts[warning] == 1
        }
    }

    var snapshot: [MuxerWarning: Int] { counts.withLock { $0 } }
}
