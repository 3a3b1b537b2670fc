import POSIX

/// The video bit rate shared by the primary network output, which measures its link and moves
/// the target (`BitrateController`), and the video encoder, which applies each new target before
/// its next frame.
final class AdaptiveBitrate: BitRateTarget {
    private let state: Locked<(controller: BitrateController, applied: Int)>

    init(maximum: Int, minimum: Int) {
        state = Locked((BitrateController(maximum: maximum, minimum: minimum), maximum))
    }

    /// The primary network output's sample (its writer's monitor thread).
    func update(at now: Int64, _ status: LinkMonitor.Status) {
        state.withLock { _ = $0.controller.update(at: now, status) }
    }

    /// A target the encoder has not applied yet, once (the encoder thread).
    func takeChange() -> Int? {
        state.withLock { s in
            guard s.controller.target != s.applied else { return nil }
            s.applied = s.controller.target
            return s.applied
        }
    }

    /// The bit rate the encoder runs at now.
    var current: Int { state.withLock { $0.applied } }
}
