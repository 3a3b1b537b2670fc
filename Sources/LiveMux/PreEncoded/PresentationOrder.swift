/// The order an elementary H.264/HEVC stream's pictures are shown in. Such a stream has no
/// timestamps; with B-frames its pictures come in decoding order, and only their picture order
/// counts (POC, read by libavcodec's parser) say when each is shown. This places them as a
/// decoder's reorder buffer outputs them: once more than `depth` pictures wait, the one with the
/// smallest POC is shown; at a new coded video sequence (an IDR, where the POC starts again)
/// every waiting picture is.
///
/// Items (packets) come out in decoding order, each once its place is known: picture `i` of the
/// decoding order with its place `p` in presentation order. When picture `i` arrives at most
/// `depth` earlier ones still wait, so at least `i − depth` were shown before it: `p ≥ i − depth`.
/// Hence DTS `i` and PTS `p + depth` (in frames) never cross, and no two PTS are equal.
struct PresentationOrder<Item> {
    /// Pictures that may wait for later ones (the stream's `video_delay`), at most 16.
    let depth: Int
    /// Items held for decoding order: one waiting for its place holds back those after it.
    /// A stream whose POCs keep a picture waiting longer than this has its waiting pictures
    /// shown at once, so what is held stays bounded.
    static var maximumHeld: Int { 4 * DecodingTimestamps.maximumDepth }

    private var held: [(item: Item, place: Int64?)] = []
    /// The decoding index of `held[0]`.
    private var firstHeld: Int64 = 0
    /// Pictures decoded and not yet shown: POC and decoding index.
    private var waiting: [(order: Int, picture: Int64)] = []
    /// The largest POC of the current sequence, and the POC shown last in it.
    private var largest: Int?
    private var lastShown: Int?
    private var decoded: Int64 = 0
    private var shown: Int64 = 0

    init(depth: Int) {
        self.depth = min(max(0, depth), DecodingTimestamps.maximumDepth)
    }

    /// Takes the next picture in decoding order: its POC and whether a decoder can start at it.
    mutating func add(_ item: Item, order: Int, isKeyframe: Bool) {
        // A keyframe whose POC does not go past the sequence's starts a new sequence (an IDR); so
        // does a POC at or before one already shown, which a well-formed sequence cannot have
        // (H.264's POC reset by memory management, or more reordering than `depth`).
        if let largest, isKeyframe && order <= largest || lastShown.map({ order <= $0 }) == true {
            showAll()
        }
        held.append((item, nil))
        waiting.append((order, decoded))
        decoded += 1
        largest = max(largest ?? order, order)
        if waiting.count > depth { showSmallest() }
        if held.count > Self.maximumHeld { showAll() }
    }

    /// At the end of the stream: every picture is shown.
    mutating func finish() { showAll() }

    /// The next item in decoding order whose place is known, with its decoding index and place.
    mutating func next() -> (item: Item, decoded: Int64, shown: Int64)? {
        guard let first = held.first, let place = first.place else { return nil }
        held.removeFirst()
        defer { firstHeld += 1 }
        return (first.item, firstHeld, place)
    }

    private mutating func showAll() {
        while !waiting.isEmpty { showSmallest() }
        largest = nil
        lastShown = nil
    }

    private mutating func showSmallest() {
        var smallest = 0
        for i in waiting.indices.dropFirst() where waiting[i].order < waiting[smallest].order { smallest = i }
        let picture = waiting.remove(at: smallest)
        held[Int(picture.picture - firstHeld)].place = shown
        shown += 1
        lastShown = picture.order
    }
}
