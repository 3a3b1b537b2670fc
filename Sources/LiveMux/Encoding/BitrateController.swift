/// The video bit rate that fits the primary network output's link: steps down at once when the
/// output falls behind, to what the measured link carries minus everything that is not video,
/// and climbs back slowly once it has kept up for a while. Pure logic, fed by `LinkWatcher`'s
/// samples (`LinkMonitor.Status`), so it is unit-tested. docs/latency.md has the step responses.
struct BitrateController {
    let maximum: Int
    let minimum: Int
    private(set) var target: Int

    /// Behind by more than this (ms): step down.
    static let congestedMs = 250.0
    /// Behind by less than this (ms) counts as keeping up.
    static let calmMs = 100.0
    /// Of the measured link, what video may take with the rest: room for keyframes and for the
    /// measurement, which varies ±5% between runs (docs/latency.md).
    static let headroom = 0.80
    /// A backlog is planned to drain within this many seconds after a step down.
    static let drainSeconds = 4.0
    /// Steps down at most this often (µs): the encoder needs a moment to follow.
    static let decreaseInterval: Int64 = 500_000
    /// Climbs only after keeping up this long (µs), one step per `increaseInterval`.
    static let calmBeforeIncrease: Int64 = 2_000_000
    static let increaseInterval: Int64 = 1_000_000
    /// Each step up, as a fraction of the maximum.
    static let increaseStep = 0.15

    private var lastDecrease: Int64?
    private var lastIncrease: Int64?
    private var calmSince: Int64?

    init(maximum: Int, minimum: Int) {
        self.maximum = maximum
        self.minimum = min(minimum, maximum)
        target = maximum
    }

    /// Takes one sample at `now` (µs); returns the new target (bits per second of video).
    mutating func update(at now: Int64, _ s: LinkMonitor.Status) -> Int {
        if s.backlogMs > Self.congestedMs {
            calmSince = nil
            guard lastDecrease.map({ now - $0 >= Self.decreaseInterval }) ?? true else { return target }
            let link = s.linkBps
            let drain = s.backlogMs / 1000 * link / Self.drainSeconds
            let fits = link * Self.headroom - s.otherBps - drain
            // At least a tenth down each time, so a mismeasured link still converges.
            let next = min(Double(target) * 0.9, fits)
            target = Self.clamp(next, minimum, maximum)
            lastDecrease = now
            return target
        }
        if s.backlogMs >= Self.calmMs { calmSince = nil; return target }
        let since = calmSince ?? now
        calmSince = since
        guard now - since >= Self.calmBeforeIncrease,
              lastIncrease.map({ now - $0 >= Self.increaseInterval }) ?? true,
              lastDecrease.map({ now - $0 >= Self.calmBeforeIncrease }) ?? true,
              target < maximum else { return target }
        var next = Double(target) + Double(maximum) * Self.increaseStep
        // A link measured busy caps the climb at what it carries; an idle one says nothing.
        if let capacity = s.capacityBps { next = min(next, max(Double(target), capacity * Self.headroom - s.otherBps)) }
        if Int(next) > target {
            target = Self.clamp(next, minimum, maximum)
            lastIncrease = now
        }
        return target
    }

    private static func clamp(_ v: Double, _ lo: Int, _ hi: Int) -> Int {
        guard v.isFinite else { return lo }
        return Swift.min(hi, Swift.max(lo, Int(v)))
    }
}
