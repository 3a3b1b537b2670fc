import POSIX

/// How far behind real time one network output is and how fast its link carries bytes, from what
/// its writer handed to the connection and what the kernel still holds (`TCPSocket.SendQueue`).
/// Pure logic (the sink holds the lock and takes the samples), so it is unit-tested.
///
/// - **Backlog**: the age (now − capture time) of the oldest media byte the peer has not
///   acknowledged, whether it waits in the kernel, in a write, or in the output's queue.
/// - **Backlog floor**: the smallest backlog over the last `floorWindow`. A keyframe's burst
///   lifts the backlog for a few hundred milliseconds and is gone; a floor that stays up is a
///   standing queue, the stream sending more than the link carries.
/// - **Quick floor**: the same over `quickFloorWindow`, which a probe's queue passes sooner.
/// - **Link rate**: what the peer acknowledged, over `window` (long enough that a burst the path
///   absorbed, a proxy's or router's buffer or token bucket, adds little), counted only between
///   samples that both found the kernel holding at least `busyBytes` (the link was the
///   bottleneck), and never more than the bytes delivered per second over the whole window. Over a
///   window where it was never busy long enough, the rate bytes were delivered at: the stream's
///   own rate, a lower bound. Either way it does not read above the link by more than the path's
///   buffers divided by the window (docs/latency.md).
/// The peer acknowledges wire bytes (RTMP chunking adds ~1%); they are turned into the bytes the
/// writer handed over by their running ratio, measured whenever no write is half done.
struct LinkMonitor {
    struct Status: Sendable, Equatable {
        var backlogMs: Double = 0
        /// The smallest backlog over the last `floorWindow` and `quickFloorWindow` (0 until the
        /// samples span the floor window).
        var backlogFloorMs: Double = 0
        var backlogQuickFloorMs: Double = 0
        /// Bits per second the link carried while busy, or nil when it was not busy long enough.
        var capacityBps: Double?
        /// Bits per second delivered (acknowledged) over the window, and over the last `floorWindow`
        /// (0 until the samples span it).
        var deliveredBps: Double = 0
        var recentBps: Double = 0
        /// Bits per second handed to the connection over the last `floorWindow` (0 until the
        /// samples span it): against `recentBps`, whether the link carried what was sent.
        var recentSentBps: Double = 0
        /// Bits per second of everything but video handed over (audio, container overhead).
        var otherBps: Double = 0
        /// The link rate: the capacity when measured (at most what was delivered), else what was delivered.
        var linkBps: Double { min(capacityBps ?? deliveredBps, deliveredBps) }
        /// The link rate while a queue has stood for the last `floorWindow`: the link was the
        /// bottleneck all that while, so what it delivered then is the link, and the capacity bounds
        /// it once a burst the path absorbed has gone by.
        var saturatedBps: Double { min(capacityBps ?? recentBps, recentBps) }
    }

    /// Samples older than this are forgotten (µs). A burst of B bytes the path absorbs reads as
    /// B·8/window bits per second more than the link: 32 KiB over 10 s is 26 kbit/s.
    static let window: Int64 = 10_000_000
    /// Busy time the capacity needs within the window before it counts (µs).
    static let minimumBusy: Int64 = 500_000
    /// The backlog floor is the smallest backlog over this long (µs): longer than a keyframe's burst.
    static let floorWindow: Int64 = 1_000_000
    /// A probe's queue is told sooner, by the floor over this long (µs): still longer than a
    /// keyframe takes through a link a probe is a quarter over (x264's quarter second of VBV: 0.31 s).
    static let quickFloorWindow: Int64 = 500_000
    /// What the kernel must hold for the link to count as the bottleneck (bytes).
    static let busyBytes: Int64 = 2048

    private struct Handed { let end: Int64; let captureTime: Int64 }
    private struct Sample { let time: Int64; let acknowledged: Int64; let busy: Bool; let handed: Int64; let video: Int64; let backlogMs: Double }

    private var handed: [Handed] = []
    private var handedHead = 0
    /// Bytes whose write has returned, and how many of them were video.
    private var completed: Int64 = 0
    private var completedVideo: Int64 = 0
    /// Bytes of the write in progress (0 when none).
    private var writing: Int64 = 0
    /// Handed bytes per wire byte, since the connection began.
    private var ratio = 1.0
    private var samples: [Sample] = []

    /// A new connection: its bytes count from zero.
    mutating func reset() { self = LinkMonitor() }

    /// The writer is about to write `bytes` captured at `captureTime` (0: a header or trailer).
    mutating func willWrite(bytes: Int, captureTime: Int64) {
        writing = Int64(bytes)
        handed.append(Handed(end: completed + writing, captureTime: captureTime))
    }

    mutating func didWrite(video: Bool) {
        completed += writing
        if video { completedVideo += writing }
        writing = 0
    }

    /// One sample at `now` (µs): `queue` is what the kernel holds (nil: not seen, so every byte
    /// handed over counts as delivered), `oldestQueued` the capture time of the oldest media chunk
    /// still waiting in the output's queue.
    mutating func sample(at now: Int64, queue: TCPSocket.SendQueue?, oldestQueued: Int64?) -> Status {
        var delivered = completed
        var busy = false
        var acknowledged = completed
        if let q = queue {
            let wire = q.acknowledged + q.unacknowledged
            if writing == 0 && wire > 0 { ratio = Double(completed) / Double(wire) }
            delivered = min(completed + writing, Int64((Double(q.acknowledged) * ratio).rounded()))
            acknowledged = q.acknowledged
            busy = q.unacknowledged >= Self.busyBytes
        }
        while handedHead < handed.count && handed[handedHead].end <= delivered { handedHead += 1 }
        if handedHead > 256 && handedHead * 2 > handed.count {
            handed.removeFirst(handedHead)
            handedHead = 0
        }
        var oldest = handed[handedHead...].first { $0.captureTime > 0 }?.captureTime
        if oldest == nil { oldest = oldestQueued }
        var status = Status()
        status.backlogMs = oldest.map { max(0, Double(now - $0) / 1000) } ?? 0
        samples.append(Sample(time: now, acknowledged: acknowledged, busy: busy, handed: completed, video: completedVideo, backlogMs: status.backlogMs))
        while samples.count > 2 && samples[1].time <= now - Self.window { samples.removeFirst() }
        // The floor and the recent rate need a whole `floorWindow` of samples (none yet at the start of a connection).
        let recent = samples.reversed().prefix { $0.time >= now - Self.floorWindow }
        let whole = samples.first.map { now - $0.time >= Self.floorWindow } ?? false
        if whole {
            status.backlogFloorMs = recent.map(\.backlogMs).min() ?? 0
            status.backlogQuickFloorMs = recent.prefix { $0.time >= now - Self.quickFloorWindow }.map(\.backlogMs).min() ?? 0
        }

        guard let first = samples.first, now > first.time else { return status }
        let span = Double(now - first.time) / 1e6
        status.deliveredBps = Double(acknowledged - first.acknowledged) * ratio * 8 / span
        if whole, let start = recent.last, now > start.time {
            let seconds = Double(now - start.time) / 1e6
            status.recentBps = Double(acknowledged - start.acknowledged) * ratio * 8 / seconds
            status.recentSentBps = Double(completed - start.handed) * 8 / seconds
        }
        status.otherBps = Double((completed - completedVideo) - (first.handed - first.video)) * 8 / span
        var busyTime: Int64 = 0, busyBytes: Int64 = 0
        for (a, b) in zip(samples, samples.dropFirst()) where a.busy && b.busy {
            busyTime += b.time - a.time
            busyBytes += b.acknowledged - a.acknowledged
        }
        if busyTime >= Self.minimumBusy { status.capacityBps = Double(busyBytes) * ratio * 8 / (Double(busyTime) / 1e6) }
        return status
    }
}
