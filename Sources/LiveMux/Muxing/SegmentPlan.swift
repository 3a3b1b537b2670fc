import FFmpeg
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// The segmenting of a session's file outputs: the policy, the cuts asked for (SIGUSR1,
/// `Pipeline.cutSegment`, `Muxer.cutSegment`) and the wall clock of the media timeline. Shared by
/// the video encoder, which forces a keyframe where a cut will be, and the mux thread, which cuts
/// at that keyframe, so both must find the same frame: they read one anchor.
public final class SegmentPlan: Sendable {
    public let policy: SegmentPolicy
    /// Told of every segment closed complete, on the mux thread (the CLI prints it and appends
    /// it to `--segment-list`).
    let onClosed: (@Sendable (SegmentRecord) -> Void)?
    /// Told of a kept segment's path when the ring deletes it before its time, to make room on a
    /// full disk (the CLI drops it from `--segment-list`).
    let onDeletedEarly: (@Sendable (String) -> Void)?
    private let anchor = Locked<Int64?>(nil)
    /// Cuts asked for: shared with the plans of outputs added while the job runs (`joining`).
    private let requests: Locked<Int>
    /// The local time zone's offset from UTC (µs), so clock periods start at local midnight, as
    /// ffmpeg's `segment_atclocktime` does.
    private let localOffset: Int64

    public init(_ policy: SegmentPolicy, onClosed: (@Sendable (SegmentRecord) -> Void)? = nil,
                onDeletedEarly: (@Sendable (String) -> Void)? = nil) {
        self.policy = policy
        self.onClosed = onClosed
        self.onDeletedEarly = onDeletedEarly
        requests = Locked(0)
        localOffset = Self.localOffset()
    }

    /// The plan of an output added while the job runs: the job's policy and the cuts asked of it,
    /// on a clock anchored at the output's own first packet (its media time starts there), and
    /// nobody told of its segments (`--segment-list` lists one output's).
    init(joining job: SegmentPlan) {
        policy = job.policy
        (onClosed, onDeletedEarly) = (nil, nil)
        requests = job.requests
        localOffset = job.localOffset
    }

    private static func localOffset() -> Int64 {
        var now = time(nil), local = tm()
        return localtime_r(&now, &local) != nil ? Int64(local.tm_gmtoff) * 1_000_000 : 0
    }

    /// Closes the current segments at the next video keyframe; the encoder makes the next frame one.
    public func requestCut() { requests.withLock { $0 += 1 } }

    /// How many cuts were asked for so far: each reader remembers how many it served.
    var cutRequests: Int { requests.withLock { $0 } }

    /// The wall clock (µs since 1970) at media time `t` (µs): the clock when the first caller asked
    /// (the first frame encoded, or the first packet muxed) was at its media time, plus the media
    /// time since. A fast recording (`--no-realtime`) is so named and cut as if it ran live.
    func wallClock(atMedia t: Int64) -> Int64 {
        anchor.withLock { a in
            if a == nil { a = Timestamp.wallClockMicroseconds() - t }
            return a! + t
        }
    }

    /// The wall-clock period of `--segment-at-clock` that media time `t` (µs) falls in; nil
    /// when the cuts are not on the clock.
    func clockPeriod(atMedia t: Int64) -> Int64? {
        guard policy.atClock, let d = policy.durationMicroseconds, d > 0 else { return nil }
        let wall = wallClock(atMedia: t) + localOffset
        return wall >= 0 ? wall / d : (wall - d + 1) / d
    }
}
