import FFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// A file output cut into segments: a `FileSink` per segment, named from the output's pattern.
/// Its writer ends each segment with a trailer (which completes the file: the header's duration
/// and sizes, ASF's index) and begins the next with a header, which creates the next file, so
/// every segment is a whole recording of its own. With a ring (`keep`), the oldest segment is
/// deleted once a new one is complete.
final class SegmentFileSink: ChunkSink, @unchecked Sendable {
    // Used by the mux thread only.
    /// The pattern as given: the output's name in messages and statistics.
    let name: String
    private let pattern: SegmentName
    private let overwrite: Bool
    private let keep: Int?
    private let announce: @Sendable (SegmentRecord) -> Void
    /// The segment being written; nil between a trailer and the next header.
    private var file: FileSink?
    private var index = 0
    private var path: String
    private var bytes: Int64 = 0
    /// The closed segments still on disk, oldest first (only with a ring).
    private var kept: [String] = []
    /// Where the next segment begins, for its name (wall clock, µs since 1970).
    private var nextWallClock: Int64 = 0
    /// The current segment's first and end time on the running timeline (µs), kept up to date by
    /// its `Segmenter`.
    var span: (start: Int64, end: Int64) = (0, 0)

    /// Creates the first segment's file now, with the other outputs' files.
    init(pattern: String, overwrite: Bool, keep: Int?, announce: @escaping @Sendable (SegmentRecord) -> Void) throws {
        name = pattern
        self.pattern = SegmentName(pattern)
        self.overwrite = overwrite
        self.keep = keep
        self.announce = announce
        path = self.pattern.path(index: 0, wallClock: Timestamp.wallClockMicroseconds())
        file = try FileSink(path: path, overwrite: overwrite)
    }

    /// The next header begins a segment whose first frame is at `wallClock` (µs since 1970).
    func beginNext(wallClock: Int64) { nextWallClock = wallClock }

    func write(_ chunk: Chunk) throws {
        if chunk.kind == .header && file == nil {
            index += 1
            path = pattern.path(index: index, wallClock: nextWallClock)
            bytes = 0
            file = try FileSink(path: path, overwrite: overwrite)
        }
        guard let file else { return }
        try file.write(chunk)
        bytes += Int64(chunk.count)
        if chunk.kind == .trailer { try closeSegment(complete: true) }
    }

    /// Closes a segment left without its trailer (the run failed): readable up to its last write.
    func close() throws { try closeSegment(complete: false) }

    /// Closes the segment being written; a complete one is announced and turns the ring.
    private func closeSegment(complete: Bool) throws {
        guard let file else { return }
        self.file = nil
        try file.close()
        guard complete else { return }
        announce(SegmentRecord(path: path, index: index, start: Double(span.start) / 1e6, end: Double(span.end) / 1e6, bytes: bytes))
        guard let keep else { return }
        kept.append(path)
        // A segment already gone (deleted by hand) is no failure of the recording.
        while kept.count > keep { _ = unlink(kept.removeFirst()) }
    }
}
