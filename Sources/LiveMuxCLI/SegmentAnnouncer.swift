import Foundation
import LiveMux

/// Says each segment closed complete: one line on stderr (unless -q) and, with `--segment-list
/// FILE`, an entry appended in ffconcat form, so `ffmpeg -f concat -i FILE` plays the segments
/// as one. Called on the mux thread; `quiet` and the list are set before the job starts.
final class SegmentAnnouncer: @unchecked Sendable {
    var quiet = false
    private let listPath: String?
    private var list: FileHandle?
    /// The segments keep the running timeline (`--segment-keep-timestamps`) instead of starting at 0.
    private let keepsTimestamps: Bool

    init(listPath: String?, keepsTimestamps: Bool) {
        self.listPath = listPath
        self.keepsTimestamps = keepsTimestamps
    }

    /// Creates the list file (refused if it exists, unless `overwrite`), once the job is built.
    func open(overwrite: Bool) throws {
        guard let listPath else { return }
        let handle = try OutputFile.create(listPath, overwrite: overwrite)
        try handle.write(contentsOf: Data("ffconcat version 1.0\n".utf8))
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
        try? list.write(contentsOf: Data(entry.utf8))
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
