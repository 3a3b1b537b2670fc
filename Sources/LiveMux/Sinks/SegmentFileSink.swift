import FFmpeg
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// A file output cut into segments: a `FileSink` per segment, named from the output's pattern.
/// Its writer ends each segment with a trailer (which completes the file: the header's duration
/// and sizes, ASF's index) and begins the next with a header, which creates the next file, so
/// every segment is a whole recording of its own. With a ring (`keep`), the oldest segment is
/// deleted once a new one is complete, and earlier when the disk is full.
final class SegmentFileSink: ChunkSink, @unchecked Sendable {
    /// What the sink tells about its segments, on the mux thread.
    struct Events: Sendable {
        /// A segment closed complete.
        let closed: @Sendable (SegmentRecord) -> Void
        /// The ring deleted a kept segment before its time, to make room on a full disk.
        let deletedEarly: @Sendable (String) -> Void
        /// A warning for stderr (and `--stats`).
        let warn: @Sendable (String) -> Void
    }

    // Used by the mux thread only.
    /// The pattern as given: the output's name in messages and statistics.
    let name: String
    private let pattern: SegmentName
    private let overwrite: Bool
    private let keep: Int?
    private let events: Events
    /// The segment being written; nil between a trailer and the next header.
    private var file: FileSink?
    /// The segment's number (the pattern's `%d`).
    private var index: Int
    /// The segment's file: its name from the pattern, or the next free one.
    private var path = ""
    private var bytes: Int64 = 0
    /// The closed segments still on disk, oldest first (only with a ring).
    private var kept: [String] = []
    /// Whether the ring made room on a full disk yet: said once.
    private var madeRoom = false
    /// Where the next segment begins, for its name (wall clock, µs since 1970).
    private var nextWallClock: Int64 = 0
    /// The current segment's first and end time on the running timeline (µs), kept up to date by
    /// its `Segmenter`.
    var span: (start: Int64, end: Int64) = (0, 0)

    /// Free names tried after a taken one (`-1` … `-999`) before the segment fails as taken.
    static let alternativeNames = 999

    /// Creates the first segment's file now, with the other outputs' files.
    init(pattern: String, overwrite: Bool, policy: SegmentPolicy, events: Events) throws {
        name = pattern
        self.pattern = SegmentName(pattern)
        self.overwrite = overwrite
        keep = policy.keep
        index = policy.startNumber
        self.events = events
        try begin(wallClock: Timestamp.wallClockMicroseconds())
    }

    /// The next header begins a segment whose first frame is at `wallClock` (µs since 1970).
    func beginNext(wallClock: Int64) { nextWallClock = wallClock }

    func write(_ chunk: Chunk) throws {
        if chunk.kind == .header && file == nil {
            index += 1
            try begin(wallClock: nextWallClock)
        }
        guard let file else { return }
        try makingRoom { try file.write(chunk) }
        bytes += Int64(chunk.count)
        if chunk.kind == .trailer { try closeSegment(complete: true) }
    }

    /// Closes a segment left without its trailer (the run failed): readable up to its last write.
    func close() throws {
        if let file { try makingRoom { try file.flush() } }
        try closeSegment(complete: false)
    }

    /// Creates the segment's file. Without `overwrite`, a name that is taken (another program
    /// made it, or a dated name repeats) is left alone and the segment goes to the next free
    /// name (`p002-1.asf`), with a warning, rather than ending the recording.
    private func begin(wallClock: Int64) throws {
        let wanted = pattern.path(index: index, wallClock: wallClock)
        bytes = 0
        if overwrite {
            file = try FileSink(path: wanted, overwrite: true)
            path = wanted
            return
        }
        for attempt in 0...Self.alternativeNames {
            let candidate = attempt == 0 ? wanted : SegmentName.alternative(to: wanted, attempt)
            guard let fd = try FileDescriptor.createNew(candidate) else { continue }
            file = try FileSink(fd)
            path = candidate
            if attempt > 0 { events.warn("\(wanted) exists: segment \(index) is written to \(candidate) instead") }
            return
        }
        throw LiveMuxError.output("\(wanted) exists, and so do \(SegmentName.alternative(to: wanted, 1)) to "
                                  + "\(SegmentName.alternative(to: wanted, Self.alternativeNames)): segment \(index) has no free name"
                                  + " (move those files away, or add -y to overwrite)")
    }

    /// Runs `write`; when the disk is full and the ring keeps a closed segment, deletes the oldest
    /// and writes again (a `FileSink` undoes a write that failed for lack of space, so nothing is
    /// lost or written twice). With nothing left to delete, the failure stands.
    private func makingRoom(_ write: () throws -> Void) throws {
        while true {
            do {
                return try write()
            } catch let error as SinkError where error.isOutOfSpace && !kept.isEmpty {
                let oldest = kept.removeFirst()
                // The list drops it before it goes, so it never names a deleted file.
                events.deletedEarly(oldest)
                delete(oldest)
                if !madeRoom {
                    madeRoom = true
                    events.warn("the disk is full: deleted \(oldest), the oldest segment kept, to go on;"
                                + " the ring deletes its oldest segment early whenever the disk is full again")
                }
            }
        }
    }

    /// Closes the segment being written; a complete one is announced and turns the ring.
    private func closeSegment(complete: Bool) throws {
        guard let file else { return }
        self.file = nil
        try file.close()
        guard complete else { return }
        events.closed(SegmentRecord(path: path, index: index, start: Double(span.start) / 1e6, end: Double(span.end) / 1e6, bytes: bytes))
        guard let keep else { return }
        kept.append(path)
        while kept.count > keep { delete(kept.removeFirst()) }
    }

    /// Deletes a segment the ring is done with. One already gone (deleted by hand) is no failure
    /// of the recording, nor is one that cannot be deleted: that is a warning.
    private func delete(_ segment: String) {
        do {
            try syscall(where: "unlink") { unlink(segment) }
        } catch where error.errno == ENOENT {
        } catch {
            events.warn("cannot delete \(segment), a segment the ring no longer keeps: \(error.message)")
        }
    }
}
