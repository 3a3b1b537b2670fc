/// Decoding timestamps for a video stream whose container stores only presentation timestamps
/// (Matroska; any demuxer that gives no DTS). With B-frames the packets come in decoding order
/// and their PTS do not increase, so using the PTS as DTS would drop most of them.
///
/// A stream reordered by at most `depth` places has decoded packet `i` no later than the
/// `(i − depth)`-th smallest PTS, so that PTS is its DTS (the rule of FFmpeg's reorder buffer); the
/// first `depth` packets, which have none, go before the smallest PTS one frame apart. The depth
/// and the frame duration come from the leading packets, which must be given first.
struct DecodingTimestamps {
    /// The deepest reordering looked for (FFmpeg's MAX_REORDER_DELAY).
    static let maximumDepth = 16
    /// Leading packets to read before the first DTS: enough to see the depth of the first GOP's
    /// pyramid, and every packet that can sort before the smallest PTS among them.
    static let lookahead = 2 * maximumDepth

    /// How many places a packet may come before the one it is shown after.
    let depth: Int
    private let smallest: Int64
    private let frameDuration: Int64
    /// PTS of the packets seen whose value has not yet been handed out as a DTS, ascending.
    private var waiting: [Int64] = []
    private var count = 0

    /// - Parameters:
    ///   - leading: the PTS of the stream's first packets in decoding order (up to `lookahead`).
    ///   - knownDepth: a depth the codec parameters promise (`video_delay`), if any.
    init(leading: [Int64], knownDepth: Int = 0) {
        let sorted = leading.sorted()
        // A packet's place in decoding order minus its place in presentation order: how far it
        // was moved forward. Places within a prefix can only overstate this, never understate it.
        var depth = max(0, knownDepth)
        for (i, pts) in leading.enumerated() {
            let rank = sorted.partitioningIndex { $0 >= pts }
            depth = max(depth, i - rank)
        }
        self.depth = min(depth, Self.maximumDepth)
        smallest = sorted.first ?? 0
        let gaps = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.filter { $0 > 0 }
        frameDuration = gaps.min() ?? 1
    }

    /// The DTS of the next packet in decoding order, given its PTS. Never after the PTS.
    mutating func next(pts: Int64) -> Int64 {
        waiting.insert(pts, at: waiting.partitioningIndex { $0 > pts })
        defer { count += 1 }
        if count < depth { return smallest - Int64(depth - count) * frameDuration }
        return min(waiting.removeFirst(), pts)
    }
}

private extension Array where Element: Comparable {
    /// The first index whose element satisfies `belongs`, for a predicate that is false and then
    /// true along a sorted array (binary search).
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if belongs(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
