/// The video bit rate that fits the primary network output's link. When a queue stands, it steps
/// down at once to what the measured link carries minus everything that is not video, and
/// remembers that link rate as its ceiling; it then holds under the ceiling and, a second later,
/// probes a quarter over it, back down at the first sign of queueing. A probe that goes its
/// learnt length with no queue, or a queue that clears faster than the measured link could clear
/// it, shows the link has grown: the ceiling is set aside and the rate climbs in steps that
/// double each second until a queue stands again (issue 41). An encoder sending well under its
/// target (simple content) says nothing of the link: its probe does not hold, and the target comes
/// down to a quarter over what it sends (not under the floor, or a measured link's hold), so
/// content that turns busy starts there (issue 52, item 4).
/// Pure logic, fed by `LinkWatcher`'s samples (`LinkMonitor.Status`), so it is unit-tested.
/// docs/latency.md has the step responses.
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
    /// quarter second). A probe ends sooner, when the backlog stood over `calmMs` for the quick
    /// floor's half second, and at `jamMs` at any instant: it never raises the backlog past the
    /// 500 ms issue 41 allows it.
    static let queueMs = 150.0
    static let calmMs = 100.0
    static let jamMs = 400.0
    /// Of the ceiling, what the stream holds at: room for keyframes to drain within a GOP, and
    /// for probes (a quarter over, for seconds behind a deep bucket) in the 10 s average
    /// (docs/latency.md has the variants measured).
    static let holdShare = 0.82
    /// Of the ceiling, what a probe sends. The more over the link, the sooner a probe sees
    /// through what a path holds before its bottleneck (a token bucket, a proxy's buffer):
    /// 48 KiB at 25% of 1 Mbit/s is 1.6 s. Issue 41 allows a quarter over, briefly.
    static let probeShare = 1.25
    /// A backlog is planned to drain within this many seconds after a step down.
    static let drainSeconds = 4.0
    /// Steps down at most this often (µs), and then only while the backlog still grows: the
    /// encoder needs a moment to follow.
    static let decreaseInterval: Int64 = 1_000_000
    /// Kept up this long (µs) before a step up, and after a step down.
    static let calmBeforeIncrease: Int64 = 1_000_000
    /// Steps up at most this often (µs); before any link was measured, each by at most `maxRise`.
    static let increaseInterval: Int64 = 1_000_000
    static let maxRise = 1.25
    /// How long a probe must go without a queue before it counts as held (µs): at first
    /// `firstProbeHold`, then `probeMargin` longer than the last failed probe took to show its
    /// queue (two controller samples), at least a GOP and the encoder's lag, at most `longestProbe`.
    static let firstProbeHold: Int64 = 6_000_000
    static let shortestProbe: Int64 = 2_500_000
    static let longestProbe: Int64 = 12_000_000
    static let probeMargin: Int64 = 500_000
    /// The most measurements one episode's median is taken over.
    static let episodeMeasurements = 40
    /// A backlog that peaked at `clearedMs` or more after a step down and is gone by the first
    /// calm sample, at more than `clearedFaster` times the rate the measured link could drain it
    /// (its spare over what is sent), says the link opened: the ceiling is set aside as if a
    /// probe had held. The encoder still sends the old rate for half a second after the step,
    /// so a link that stayed drains slower still.
    static let clearedMs = 200.0
    static let clearedFaster = 4.0
    /// Of what was sent over the last second, what the link must have carried for a probe to hold.
    static let carriedShare = 0.9
    /// Of the ceiling, what must have been sent on average over a probe for it to hold: an
    /// encoder that cannot fill the probe (simple content) sends it over no link (issue 52, item 4).
    /// Averaged over the probe, as a second's bytes vary by a tenth with the keyframes.
    static let probeSentShare = 1.1
    /// An encoder that sent less than this share of its target over the last second is under it
    /// (a still picture; x264's GOP alone varies a second's bytes by about a tenth): it rises at
    /// most `underfilledRise` over what it sent, and a climb waits, so the first busy scene after
    /// a calm one cannot send far over the link.
    static let underfilledShare = 0.8
    static let underfilledRise = 1.25
    /// How long after the target rose (µs) a second's bytes show what the encoder makes of it.
    static let underfilledAfter: Int64 = 2_000_000
    /// Congestion this soon (µs) after a held probe, on a link no faster than the probe, means
    /// the probe was hidden, not held: the ceiling comes back and probes last twice as long.
    static let probeAftermath: Int64 = 10_000_000

    private var lastDecrease: Int64?
    private var backlogAtDecrease = 0.0
    /// From the last step down to the first calm sample after it: the highest backlog, and when.
    private var sinceCut: (peakMs: Double, at: Int64)?
    private var lastIncrease: Int64?
    private var calmSince: Int64?
    /// Since when a probe above the ceiling has been sent (nil: not probing), and the sum and
    /// count of the send rates sampled since.
    private var probeSince: Int64? { didSet { probeSent = (0, 0) } }
    private var probeSent = (total: 0.0, count: 0)
    private var probeHold = Self.firstProbeHold
    /// The ceiling `probeHold` was learnt under: a path hides a probe for its buffers over the
    /// probe's excess, a quarter of the link, so under a lower ceiling a probe takes longer.
    private var probeHoldCeiling: Double?
    /// The last probe that held: when, and the ceiling it set aside.
    private var heldProbe: (time: Int64, ceiling: Double)?
    /// After a probe held, the next step up (bits per second): it doubles each time, until a queue stands.
    private var climbStep: Double?
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
        if let cut = sinceCut, s.backlogMs >= cut.peakMs { sinceCut = (s.backlogMs, now) }
        let probeQueued = probeSince != nil && s.backlogQuickFloorMs > Self.calmMs
        if s.backlogFloorMs > Self.queueMs || s.backlogMs > Self.jamMs || probeQueued {
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
        climbStep = nil
        let episode = backlogAtDecrease > 0
        // Only a backlog that stood the whole floor window measures the link: a probe's queue
        // told by the quick floor leaves the ceiling as it was (the probe failed: the link is it).
        if s.backlogFloorMs > (probeSince == nil ? Self.queueMs : Self.calmMs) { measureCeiling(at: now, s, episode: episode) }
        if let start = probeSince {
            // Later probes last half a second longer than this one took to show its queue.
            probeHold = min(max(Self.shortestProbe, now - start + Self.probeMargin), Self.longestProbe)
            probeHoldCeiling = ceiling
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
        sinceCut = (s.backlogMs, now)
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
        ceiling = min(link, cap ?? link)
    }

    private mutating func stepUp(at now: Int64, _ s: LinkMonitor.Status) {
        let since = calmSince ?? now
        calmSince = since
        // The video sent over the last second, and whether the encoder was well under its target
        // (a whole second after the target last rose: the encoder follows it half a second late).
        let sentVideo = s.recentSentBps - s.otherBps
        let settled = lastIncrease.map { now - $0 >= Self.underfilledAfter } ?? true
        let underfilled = settled && s.recentSentBps > 0 && sentVideo < Double(target) * Self.underfilledShare
        if let ceiling, let cut = sinceCut, now > cut.at, s.backlogMs < Self.calmMs {
            // Backlog ms the measured link drains per ms at most, and what went since the peak.
            let spare = max(0, ceiling / (Double(target) + s.otherBps) - 1)
            let drained = (cut.peakMs - s.backlogMs) / (Double(now - cut.at) / 1000)
            sinceCut = nil
            if cut.peakMs >= Self.clearedMs && drained > spare * Self.clearedFaster {
                setAside(ceiling, at: now, from: ceiling * Self.probeShare - s.otherBps)
            }
        } else if let start = probeSince, let ceiling {
            // A probe the encoder cannot fill (simple content) goes over no link: it counts from
            // when the encoder fills it, and stays no more than a quarter over what is sent (not
            // under the hold).
            if underfilled {
                probeSince = now
                lowerToWhatIsSent(sentVideo, s)
                return
            }
            if s.recentSentBps > 0 { probeSent = (probeSent.total + s.recentSentBps, probeSent.count + 1) }
            // Held: its learnt length with no queue standing, none forming now, the link carried
            // what was sent over the last second (a bursty link lets the backlog dip), and what was
            // sent over the probe was over the link measured (none sampled: nothing known).
            let scaled = Double(probeHold) * max(1, (probeHoldCeiling ?? ceiling) / ceiling)
            guard Double(now - start) >= min(scaled, Double(Self.longestProbe)), s.backlogMs < Self.calmMs,
                  s.recentBps >= s.recentSentBps * Self.carriedShare,
                  probeSent.count == 0 || probeSent.total / Double(probeSent.count) >= ceiling * Self.probeSentShare else { return }
            // Over the ceiling this long with no queue: the link carries more than was measured.
            setAside(ceiling, at: now, from: Double(target))
        }
        if underfilled && probeSince == nil && lowerToWhatIsSent(sentVideo, s) { return }
        guard now - since >= Self.calmBeforeIncrease || climbStep != nil,
              lastIncrease.map({ now - $0 >= Self.increaseInterval }) ?? true,
              lastDecrease.map({ now - $0 >= Self.calmBeforeIncrease }) ?? true,
              target < maximum else { return }
        var next = Double(target) * Self.maxRise
        if let ceiling {
            let hold = ceiling * Self.holdShare - s.otherBps
            if Double(target) < hold * 0.98 {
                // Under a link just measured: back to the hold in one step.
                next = hold
            } else {
                // At the hold (for `increaseInterval` at least): a probe, in one step.
                next = ceiling * Self.probeShare - s.otherBps
                if next > Double(target) + 1 { probeSince = now }
            }
        } else if let step = climbStep, !underfilled {
            // A climb goes on only while the encoder fills what it has.
            climbStep = step * 2
            next = Double(target) + climbStep!
        }
        if underfilled { next = min(next, max(Double(target), sentVideo * Self.underfilledRise)) }
        if next > Double(target) + 1 {
            set(next)
            lastIncrease = now
        }
    }

    /// Sending well under the target shows nothing of the link: the target comes down to a quarter
    /// over what is sent (not under a measured link's hold), so the first busy scene cannot send
    /// far over a link nothing measured. Whether it came down.
    @discardableResult
    private mutating func lowerToWhatIsSent(_ sentVideo: Double, _ s: LinkMonitor.Status) -> Bool {
        let hold = ceiling.map { $0 * Self.holdShare - s.otherBps } ?? 0
        let lowered = min(Double(target), max(hold, sentVideo * Self.underfilledRise))
        guard lowered < Double(target) - 1 else { return false }
        set(lowered)
        return true
    }

    /// The link carries more than `ceiling`: the climb starts at once, from `level`, at twice a
    /// probe's step over the hold (`holdShare`).
    private mutating func setAside(_ ceiling: Double, at now: Int64, from level: Double) {
        probeSince = nil
        heldProbe = (now, ceiling)
        self.ceiling = nil
        climbStep = ceiling * (Self.probeShare - Self.holdShare)
        if Int(level) > target {
            set(level)
            lastIncrease = now
        }
    }

    private mutating func set(_ v: Double) {
        target = v.isFinite ? Swift.min(maximum, Swift.max(minimum, Int(v))) : minimum
    }
}
