import Foundation

/// The video bit rate shared by the primary network output, which measures its link and moves
/// the target (`BitrateController`), and the video encoder, which applies each new target before
/// its next frame. Locking: `lock` guards `controller` and `applied`.
final class AdaptiveBitrate: @unchecked Sendable {
    private let lock = NSLock()
    private var controller: BitrateController
    private var applied: Int

    init(maximum: Int, minimum: Int) {
        controller = BitrateController(maximum: maximum, minimum: minimum)
        applied = maximum
    }

    /// The primary network output's sample (its writer's monitor thread).
    func update(at now: Int64, _ status: LinkMonitor.Status) {
        lock.lock()
        _ = controller.update(at: now, status)
        lock.unlock()
    }

    /// A target the encoder has not applied yet, once (the encoder thread).
    func takeChange() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard controller.target != applied else { return nil }
        applied = controller.target
        return applied
    }

    /// The bit rate the encoder runs at now.
    var current: Int {
        lock.lock()
        defer { lock.unlock() }
        return applied
    }
}
