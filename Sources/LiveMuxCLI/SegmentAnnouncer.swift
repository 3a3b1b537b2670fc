import Foundation
import LiveMux
import POSIX

/// Says each segment closed complete: one line on stderr (unless -q) and, with `--segment-list
/// FILE`, an entry in ffconcat form, so `ffmpeg -f concat -i FILE` plays the segments as one.
/// Without a ring the list is an append-only log; with `--segment-keep N` it names the N segments
/// on disk, as ffmpeg's `segment_list_size` does, and is replaced whole (a new file renamed over
/// it) each time, so a reader never sees a half-written list or one naming a deleted segment.
/// Called on the mux thread; `quiet` and the list are set before the job starts.
final class SegmentAnnouncer: @unchecked Sendable {
    var quiet = false
    private let listPath: String?
    private var list: FileHandle?
    /// The segments keep the running timeline (`--segment-keep-timestamps`) instead of starting at 0.
    private let keepsTimestamps: Bool
    /// The ring's size, and the entries of the segments it keeps, oldest first.
    private let keep: Int?
    private var entries: [(path: String, text: String)] = []
    /// Whether a list that could not be replaced was said (once).
    private var warned = false

    static let header = "ffconcat version 1.0\n"

    init(listPath: String?, keepsTimestamps: Bool, keep: Int?) {
        self.listPath = listPath
        self.keepsTimestamps = keepsTimestamps
        self.keep = keep
    }

    /// Creates the list file (refused if it exists, unless `overwrite`), once the job is built.
    func open(overwrite: Bool) throws {
        guard let listPath else { return }
        let handle = try OutputFile.create(listPath, overwrite: overwrite)
        try handle.write(contentsOf: Data(Self.header.utf8))
        list = handle
    }

    func announce(_ s: SegmentRecord) {
        if !quiet {
            let line = String(format: "segment %@ closed: %.3f s (%.3f to %.3f), %lld bytes", s.path, s.duration, s.start, s.end, s.bytes)
            // On a terminal the progress line is rewritten in place: clear it first.
            Terminal.write((Terminal.stderrIsTerminal ? "\r\u{1B}[K" : "") + line + "\n")
        }
        guard let list, let listPath else { return }
        // `inpoint` is where the segment's timestamps start: without it the concat demuxer starts
        // each file at its start_time, which for ASF is its first audio packet's (ffprobe sees no
        // video PTS there), a few ms after the keyframe, and shifted every segment by that much.
        let entry = "file '\(Self.listed(s.path, from: listPath).replacingOccurrences(of: "'", with: "'\\''"))'\n"
            + String(format: "inpoint %.6f\nduration %.6f\n", keepsTimestamps ? s.start : 0.0, s.duration)
        // A list that cannot be written loses its entries, never the recording.
        guard let keep else {
            try? list.write(contentsOf: Data(entry.utf8))
            return
        }
        // The ring deletes the oldest segment after this announcement: the list drops it first.
        entries.append((s.path, entry))
        if entries.count > keep { entries.removeFirst(entries.count - keep) }
        rewriteList()
    }

    /// The ring deletes `path` before its time (the disk is full): the list drops it first.
    func deletedEarly(_ path: String) {
        guard list != nil, let index = entries.firstIndex(where: { $0.path == path }) else { return }
        entries.remove(at: index)
        rewriteList()
    }

    private func rewriteList() {
        guard let listPath else { return }
        replace(listPath, with: Data((Self.header + entries.map(\.text).joined()).utf8))
    }

    /// Writes the whole list to a new file beside it and renames that over it; if that cannot be
    /// done, rewrites the list in place, so it still names the segments kept. The first failure
    /// is one warning, not one per segment.
    private func replace(_ path: String, with text: Data) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp").path
        let failure: Error
        do {
            try Self.write(text, toNew: temporary)
            do {
                try syscall(where: "rename") { rename(temporary, path) }
                return
            } catch {
                failure = error
                _ = try? syscall(where: "unlink") { unlink(temporary) }  // the rename's failure is the one said
            }
        } catch {
            failure = error
        }
        // The list is livemux's own: truncating it is no loss.
        let inPlace = (try? OutputFile.create(path, overwrite: true).write(contentsOf: text)) != nil
        guard !warned else { return }
        warned = true
        Terminal.warning("cannot replace the segment list \(path) whole (\(failure)): "
                         + (inPlace ? "it is rewritten in place instead" : "it cannot be written either, and no longer follows the segments"))
    }

    /// Creates `path` (never over a file there) holding `text`; a file left half-written is removed.
    private static func write(_ text: Data, toNew path: String) throws {
        let handle = try OutputFile.create(path, overwrite: false)
        do {
            try handle.write(contentsOf: text)
            try handle.close()
        } catch {
            try? handle.close()
            _ = try? syscall(where: "unlink") { unlink(path) }  // the write's failure is the one said
            throw error
        }
    }

    /// The segment's path as the concat demuxer reads it: relative names are taken from the
    /// list's directory, so a segment beside the list is named alone, any other absolutely.
    private static func listed(_ path: String, from listPath: String) -> String {
        let segment = URL(fileURLWithPath: path).standardizedFileURL
        let directory = URL(fileURLWithPath: listPath).standardizedFileURL.deletingLastPathComponent()
        if segment.deletingLastPathComponent().path == directory.path { return segment.lastPathComponent }
        return segment.path
    }
}
