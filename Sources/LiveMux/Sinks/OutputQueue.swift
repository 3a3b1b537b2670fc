/// The chunks waiting for one network output or one HTTP viewer, with the policy for when that
/// output falls behind. Pure logic (the owner holds the lock), so it is unit-tested.
///
/// Past `limit` chunks the newest droppable video goes first — non-keyframe video after the last
/// queued keyframe, which leaves every earlier frame decodable — and video is skipped until the
/// next keyframe. Audio, keyframes, headers and trailers are never dropped by this; if they alone
/// pass `hardLimit` the output is hopeless (a reader that reads nothing) and `push` says so.
struct OutputQueue {
    enum PushResult: Equatable { case queued, dropped, overflow }

    let limit: Int
    let hardLimit: Int
    private var items: [Chunk] = []
    private var head = 0
    /// Non-keyframe video is dropped until the next keyframe (a frame before it was dropped).
    private(set) var skippingVideo = false
    /// Every media chunk is dropped until the next video keyframe (a reconnect, or a late start).
    private(set) var awaitingKeyframe = false
    /// Media chunks dropped, ever.
    private(set) var dropped = 0

    init(limit: Int, hardLimit: Int? = nil) {
        self.limit = max(1, limit)
        self.hardLimit = hardLimit ?? self.limit * 4
    }

    var count: Int { items.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func push(_ chunk: Chunk) -> PushResult {
        if case .media(let stream, _, let isKeyframe) = chunk.kind {
            let videoKey = stream == .video && isKeyframe
            if videoKey {
                skippingVideo = false
                awaitingKeyframe = false
            } else if awaitingKeyframe || (stream == .video && skippingVideo) {
                dropped += 1
                return .dropped
            }
            if count >= limit {
                dropNewestDroppableVideo()
                if stream == .video && !isKeyframe {
                    skippingVideo = true
                    dropped += 1
                    return .dropped
                }
                if count >= hardLimit { return .overflow }
            }
        }
        append(chunk)
        return .queued
    }

    mutating func pop() -> Chunk? {
        guard head < items.count else { return nil }
        let chunk = items[head]
        head += 1
        // Compacted often: popped entries still hold their chunks (an HTTP viewer's footprint).
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return chunk
    }

    /// Restarts the stream at a video keyframe: queued media before the newest queued keyframe is
    /// dropped, and if none is queued every media chunk is dropped until one arrives. Headers and
    /// trailers stay. Used after a reconnect, which sends fresh headers first.
    mutating func restartAtKeyframe() {
        let pending = Array(items[head...])
        let lastKey = pending.lastIndex { if case .media(.video, _, true) = $0.kind { return true } else { return false } }
        var kept: [Chunk] = []
        for (i, c) in pending.enumerated() {
            if case .media = c.kind, lastKey.map({ i < $0 }) ?? true {
                dropped += 1
                continue
            }
            kept.append(c)
        }
        items = kept
        head = 0
        skippingVideo = false
        awaitingKeyframe = lastKey == nil
    }

    /// Bounds latency (`--max-latency`): drops queued video before the newest queued video
    /// keyframe, audio kept; with no keyframe queued, drops the queued non-keyframe video and skips
    /// video until the next keyframe. Headers and trailers stay. Returns the chunks dropped.
    @discardableResult
    mutating func skipToNewestKeyframe() -> Int {
        let before = dropped
        let pending = items[head...]
        if let key = pending.lastIndex(where: Self.isVideoKeyframe) {
            let kept = pending.enumerated().filter { i, c in
                guard head + i < key, case .media(.video, _, _) = c.kind else { return true }
                return false
            }.map(\.element)
            dropped += pending.count - kept.count
            items = kept
            head = 0
        } else {
            let kept = pending.filter { if case .media(.video, _, false) = $0.kind { return false } else { return true } }
            dropped += pending.count - kept.count
            items = Array(kept)
            head = 0
            skippingVideo = true
        }
        return dropped - before
    }

    /// Whether skipping to the newest keyframe would drop anything now or from here on: video
    /// is queued before a keyframe, or non-keyframe video is queued or still to come.
    var canSkip: Bool {
        let pending = items[head...]
        guard let key = pending.lastIndex(where: Self.isVideoKeyframe) else { return !skippingVideo }
        return pending[..<key].contains { if case .media(.video, _, _) = $0.kind { return true } else { return false } }
    }

    /// The capture time (monotonic µs) of the oldest queued media chunk.
    var oldestCaptureTime: Int64? {
        items[head...].first { $0.captureTime > 0 }?.captureTime
    }

    private static func isVideoKeyframe(_ c: Chunk) -> Bool {
        if case .media(.video, _, true) = c.kind { return true } else { return false }
    }

    private mutating func append(_ chunk: Chunk) { items.append(chunk) }

    /// Drops queued non-keyframe video after the last queued video keyframe (or after the head).
    private mutating func dropNewestDroppableVideo() {
        var start = head
        for i in stride(from: items.count - 1, through: head, by: -1) {
            if case .media(.video, _, true) = items[i].kind { start = i + 1; break }
        }
        guard start < items.count else { return }
        let before = items.count
        var tail = Array(items[start...])
        tail.removeAll { if case .media(.video, _, false) = $0.kind { return true } else { return false } }
        items.replaceSubrange(start..., with: tail)
        let removed = before - items.count
        if removed > 0 {
            dropped += removed
            skippingVideo = true
        }
    }
}
