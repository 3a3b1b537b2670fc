import POSIX

/// How many packets of each kind a `Muxer` dropped; the first of a kind is told, the rest counted.
final class MuxerWarningCounter: Sendable {
    private let statistics: Statistics
    private let report: @Sendable (String) -> Void
    private let counts = Locked<[MuxerWarning: Int]>([:])

    init(statistics: Statistics, report: @escaping @Sendable (String) -> Void) {
        self.statistics = statistics
        self.report = report
    }

    /// Counts a dropped packet, in `statistics` too, and tells the first of its kind.
    func drop(_ warning: MuxerWarning) {
        let first = count(warning)
        statistics.countDropped(warning == .unreadableAudio || warning == .audioParametersChanged ? .audio : .video)
        if first { report(warning.description + " (counted)") }
    }

    /// Counts one; true the first time of its kind.
    private func count(_ warning: MuxerWarning) -> Bool {
        counts.withLock { counts in
            counts[warning, default: 0] += 1
            return counts[warning] == 1
        }
    }

    var snapshot: [MuxerWarning: Int] { counts.withLock { $0 } }
}
