/// The video bit rate that fits the primary network output's link. When a queue stands, it steps
/// down at once to what the measured link carries minus everything that is not video, and
/// remembers that link rate as its ceiling; it then holds under the ceiling and now and then
/// probes a little above it, back under at the first sign of queueing. A probe that holds shows
/// the link has grown: the ceiling is set aside and the rate climbs, by at most 25% a second,
/// until a queue stands again. Pure logic, fed by `LinkWatcher`'s samples (`LinkMonitor.Status`),
/// so it is unit-tested. docs/latency.md has the step responses.
struct BitrateController {
    let maximum: Int
    let minimum: Int
    private(set) var target: Int
    /// The link rate (bits per second, everything sent) measured while a queue stood; nil while
    /// none has, or since a probe showed the link carries more.
    private(set) var ceiling: Double?

    /// A backlog that stood over this (its floor, ms), or one over `jamMs` at any instant: step
    /// down. Under `calmMs` counts as keeping up: an audio packet leaves the mux 45–65 ms after
    /// capture (docs/latency.md), so a busy link never shows much less. A keyframe alone lifts
    /// the backlog for less than the floor's second, and stays under `jamMs` (x264's buffer is a
    /// quarter second).
    static let queueMs = 150.0
    static let calmMs = 100.0
    static let jamMs = 400.0
    /// Of the ceiling, what the stream holds at: room for keyframes to drain within a GOP.
    static let holdShare = 0.88
    /// Of the ceiling, what a probe sends: enough over the link to show a queue, little enough
    /// that video stays under 95% of a link that carries 128k audio too (x264 overshoots its
    /// target by 4% over a GOP).
    static let probeShare = 1.035
    /// A backlog is planned to drain within this many seconds after a step down.
    static let drainSeconds = 4.0
    /// Steps down at most this often (µs), and then only while the backlog still grows: the
    /// encoder needs a moment to follow.
    static let decreaseInterval: Int64 = 1_000_000
    /// Kept up this long (µs) before a step up, and after a step down.
    static let calmBeforeIncrease: Int64 = 1_500_000
    /// Steps up at most this often (µs), each by at most `maxRise`.
    static let increaseInterval: Int64 = 1_000_000
    static let maxRise = 1.25
    /// How long a probe must go without a queue before it counts as held (µs). A token bucket or
    /// a buffer on the path hides a probe until it is full (48 KiB at 3.5% of 1 Mbit/s: 11 s), so
    /// at first long, then learnt: a quarter longer than the last failed probe took to show its
    /// queue, at least a GOP and the encoder's lag, at most `longestProbe`.
    static let firstProbeHold: Int64 = 14_000_000
    static let shortestProbe: Int64 = 2_500_000
    static let longestProbe: Int64 = 16_000_000
    /// Under a ceiling, keyframes take about as long to get through each GOP (the backlog's
    /// peak, which includes the 45–65 ms every audio packet has). Under `fasterKeyframe` of the
    /// slowest seen under it with no queue standing, when that was at least `slowKeyframeMs`,
    /// means the link grew: the ceiling is set aside as if a probe had held.
    static let slowKeyframeMs = 100.0
    static let fasterKeyframe = 0.6
    /// Keyframes are believed only while probes last at most this long (µs): the last failed one
    /// showed its queue within 8 s.
    static let keyframesTold: Int64 = 10_000_000
    /// Ceilings this close (a share) are the same link for comparing keyframes.
    static let sameCeiling = 0.10
    /// The most measurements one episode's median is taken over.
    static let episodeMeasurements = 40
    /// Congestion this soon (µs) after a held probe, on a link no faster than the old ceiling,
    /// means the probe was hidden, not held: the ceiling comes back and probes last twice as long.
    static let probeAftermath: Int64 = 10_000_000

    private var lastDecrease: Int64?
    private var backlogAtDecrease = 0.0
    private var lastIncrease: Int64?
    private var calmSince: Int64?
    /// Since when a probe above the ceiling has been sent (nil: not probing).
    private var probeSince: Int64?
    private var probeHold = Self.firstProbeHold
    /// The last probe that held: when, and the ceiling it set aside.
    private var heldProbe: (time: Int64, ceiling: Double)?
    /// The slowest a keyframe got through while holding under the ceiling (the backlog's peak, ms),
    /// since the ceiling was last set aside or moved.
    private var keyframePeakMs = 0.0
    /// The links measured in this episode of congestion, and the ceiling a hidden probe brought back.
    private var measured: [Double] = []
    private var cap: Double?

    init(maximum: Int, minimum: Int) {
        self.maximum = maximum
        self.minimum = min(minimum, maximum)
        target = maximum
    }

    /// Takes one sample at `now` (µs); returns the new target (bits per second of video).
    mutating func update(at now: Int64, _ s: LinkMonitor.Status) -> Int {
        if s.backlogFloorMs > Self.queueMs || s.backlogMs > Self.jamMs {
            stepDown(at: now, s)
        } else if s.backlogFloorMs < Self.calmMs {
            backlogAtDecrease = 0
            stepUp(at: now, s)
        } else {
            calmSince = nil
        }
        return target
    }

    private mutating func stepDown(at now: Int64, _ s: LinkMonitor.Status) {
        calmSince = nil
        let episode = backlogAtDecrease > 0
        // A probe ends at the first sign of a queue standing; otherwise it takes a longer one.
        if s.backlogFloorMs > (probeSince == nil ? Self.queueMs : Self.calmMs) { measureCeiling(at: now, s, episode: episode) }
        if let start = probeSince {
            // Later probes last a quarter longer than this one took to show its queue.
            probeHold = min(max(Self.shortestProbe, (now - start) * 5 / 4), Self.longestProbe)
            probeSince = nil
        }
        guard !episode || lastDecrease.map({ now - $0 >= Self.decreaseInterval && s.backlogMs >= backlogAtDecrease }) ?? true else { return }
        // A backlog that only jumped measures nothing, but the last second's rate bounds this
        // step (the link may have dropped under the ceiling); in a connection's first second
        // there is none, and it is a tenth down.
        let recent = s.recentBps > 0 ? s.saturatedBps : nil
        var next = Double(target) * 0.9
        if let link = [ceiling, recent].compactMap({ $0 }).min() {
            let drain = s.backlogMs / 1000 * link / Self.drainSeconds
            let fits = link * Self.holdShare - s.otherBps - drain
            // Down again in one episode: at least a tenth, so a mismeasured link still converges.
            next = episode ? min(next, fits) : fits
        }
        set(min(Double(target), next))
        lastDecrease = now
        backlogAtDecrease = s.backlogMs
    }

    /// A backlog that stood for the last `floorWindow` means the link was the bottleneck all that
    /// while: what it delivered is the link. Over one episode, the median of what it measured (a
    /// burst the path absorbed reads high at first, a stalled sample low); a new episode
    /// measures afresh.
    private mutating func measureCeiling(at now: Int64, _ s: LinkMonitor.Status, episode: Bool) {
        if !episode {
            measured.removeAll()
            cap = nil
        }
        measured.append(s.saturatedBps)
        // The last `episodeMeasurements` (10 s of samples): a link down for minutes stays bounded.
        if measured.count > Self.episodeMeasurements { measured.removeFirst() }
        let link = measured.sorted()[measured.count / 2]
        if let held = heldProbe, now - held.time < Self.probeAftermath, link < held.ceiling * Self.probeShare {
            // The probe that held was only hidden by the path: its ceiling comes back for this
            // episode, and probes last twice as long.
            cap = held.ceiling
            probeHold = min(probeHold * 2, Self.longestProbe)
            heldProbe = nil
        }
        // Keyframes are compared under one ceiling: a link that moved makes them another size.
        let next = min(link, cap ?? link)
        if let ceiling, abs(next - ceiling) > ceiling * Self.sameCeiling { keyframePeakMs = 0 }
        ceiling = next
    }

    private mutating func stepUp(at now: Int64, _ s: LinkMonitor.Status) {
        let since = calmSince ?? now
        calmSince = since
        // Keyframes at the hold or probing, over a GOP that began a second after the last change
        // (a step down's drain is over) with no queue standing (a failing probe's is not a keyframe's).
        if let ceiling, Double(target) >= (ceiling * Self.holdShare - s.otherBps) * 0.98, now - since >= LinkMonitor.peakWindow {
            let settled = [lastIncrease, lastDecrease].compactMap { $0 }.allSatisfy { now - $0 >= LinkMonitor.peakWindow + 1_000_000 }
            if settled && s.backlogFloorMs < Self.calmMs / 2 { keyframePeakMs = max(keyframePeakMs, s.backlogPeakMs) }
            // A path that hides a probe for long (a deep bucket) passes keyframes fast or slow as
            // its bucket is full or empty: only on one that shows a probe's queue soon do they say something.
            if probeHold <= Self.keyframesTold && keyframePeakMs >= Self.slowKeyframeMs && s.backlogPeakMs <= keyframePeakMs * Self.fasterKeyframe {
                probeSince = nil
                heldProbe = (now, ceiling)
                self.ceiling = nil
                keyframePeakMs = 0
            }
        }
        if let start = probeSince, let ceiling {
            let probe = ceiling * Self.probeShare - s.otherBps
            if Double(target) < probe * 0.99 {
                // Still on the way up to the probe's level (25% a second at most): it counts from there.
                guard lastIncrease.map({ now - $0 >= Self.increaseInterval }) ?? true else { return }
                set(min(probe, Double(target) * Self.maxRise))
                lastIncrease = now
                probeSince = now
                return
            }
            guard now - start >= probeHold else { return }
            // Above the ceiling this long with no queue: the link carries more than was measured.
            probeSince = nil
            heldProbe = (now, ceiling)
            self.ceiling = nil
            keyframePeakMs = 0
        }
        guard now - since >= Self.calmBeforeIncrease,
              lastIncrease.map({ now - $0 >= Self.increaseInterval }) ?? true,
              lastDecrease.map({ now - $0 >= Self.calmBeforeIncrease }) ?? true,
              target < maximum else { return }
        var next = Double(target) * Self.maxRise
        if let ceiling {
            let hold = ceiling * Self.holdShare - s.otherBps
            if Double(target) < hold * 0.98 {
                next = min(next, hold)
            } else {
                next = min(next, ceiling * Self.probeShare - s.otherBps)
                probeSince = now
            }
        }
        if Int(next) > target {
            set(next)
            lastIncrease = now
        }
    }

    private mutating func set(_ v: Double) {
        target = v.isFinite ? Swift.min(maximum, Swift.max(minimum, Int(v))) : minimum
    }
}
