import Foundation

/// How many packets of each kind a `Muxer` dropped; the first of a kind is told, the rest counted.
final class MuxerWarningCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [MuxerWarning: Int] = [:]

    /// Counts one; true the first time of its kind.
    func count(_ warning: MuxerWarning) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        counts[warning, default: 0] += 1
        return counts[warning] == 1
    }

    var snapshot: [MuxerWarning: Int] {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }
}
