import Foundation
import FFmpeg
import POSIX

/// HLS from the browsers' fragmented MP4 (`BrowserStream`): a sink of the same chunks as
/// `/live.mp4`. The header is the init segment (`/live/init.mp4`); a segment (`/live/N.m4s`) is
/// the fragments from one video keyframe to the next — one GOP — and the playlist (`/live.m3u8`)
/// lists the last `keptSegments`. Everything is in memory and bounded; nothing touches the disk.
/// The mux thread writes; the server's loop reads: the segments live in `state`.
final class HLSPlaylist: ChunkSink, Sendable {
    let name = HLSPlaylist.playlistPath

    static let playlistPath = "/live.m3u8"
    static let initPath = "/live/init.mp4"
    private static let segmentPrefix = "/live/"
    private static let segmentSuffix = ".m4s"
    /// Segments the playlist lists and memory holds: about 12 s at the default 2 s GOP.
    static let keptSegments = 6
    /// Without video, audio is cut this often (every audio packet starts cleanly).
    static let audioOnlySegmentSeconds = 2.0
    /// A segment that grows past this (a GOP far longer than any default) is dropped, and the
    /// next keyframe starts a new one, so memory stays bounded.
    static let maxSegmentBytes = 64 << 20

    private struct Segment {
        let sequence: Int
        let duration: Double
        let bytes: [UInt8]
    }

    private struct State {
        var initSegment: [UInt8]?
        var segments: [Segment] = []
        /// The segment being filled: its first chunk's DTS (ms) and its bytes so far.
        var open: (start: Int64, bytes: [UInt8])?
        var nextSequence = 0
        /// Segments are cut at video keyframes; without video, every `audioOnlySegmentSeconds`.
        var hasVideo = false
        var ended = false
    }
    private let state = Locked(State())

    /// Whether the stream has video (known once the writers exist, before the first chunk).
    var hasVideo: Bool {
        get { state.withLock { $0.hasVideo } }
        set { state.withLock { $0.hasVideo = newValue } }
    }

    func write(_ chunk: Chunk) throws {
        state.withLock { s in
            switch chunk.kind {
            case .header:
                s.initSegment = chunk.bytes
            case .media(let stream, let dts, let isKeyframe):
                let startsSegment = stream == .video ? isKeyframe
                    : !s.hasVideo && (s.open.map { Double(dts - $0.start) / 1000 >= Self.audioOnlySegmentSeconds } ?? true)
                if startsSegment {
                    Self.closeSegment(&s, at: dts)
                    s.open = (dts, [])
                }
                guard s.open != nil else { return }  // before the first keyframe
                chunk.withUnsafeBytes { s.open!.bytes.append(contentsOf: $0) }
                if s.open!.bytes.count > Self.maxSegmentBytes { s.open = nil }
            case .trailer:
                if let open = s.open { Self.closeSegment(&s, at: open.start + Int64(Self.audioOnlySegmentSeconds * 1000)) }
                s.ended = true
            }
        }
    }

    /// Ends the open segment at `dts` (ms) and keeps the newest `keptSegments`.
    private static func closeSegment(_ s: inout State, at dts: Int64) {
        guard let open = s.open, !open.bytes.isEmpty else { return }
        s.segments.append(Segment(sequence: s.nextSequence, duration: Double(max(dts - open.start, 1)) / 1000, bytes: open.bytes))
        s.nextSequence += 1
        if s.segments.count > keptSegments { s.segments.removeFirst(s.segments.count - keptSegments) }
        s.open = nil
    }

    func close() throws {
        state.withLock { $0.ended = true }
    }

    /// Whether `path` is one of the playlist's (for the server's routing).
    static func serves(_ path: String) -> Bool {
        path == playlistPath || path == initPath || (path.hasPrefix(segmentPrefix) && path.hasSuffix(segmentSuffix))
    }

    /// What the server answers for `path`: the body and its Content-Type, nil when there is none
    /// (yet, or any more). `query` is added to every URI in the playlist (a viewer key or signature).
    func answer(_ path: String, query: String) -> (body: [UInt8], contentType: String)? {
        state.withLock { s in
            if path == Self.playlistPath {
                guard let text = Self.playlist(s, query: query) else { return nil }
                return (Array(text.utf8), "application/vnd.apple.mpegurl")
            }
            if path == Self.initPath { return s.initSegment.map { ($0, "video/mp4") } }
            let number = path.dropFirst(Self.segmentPrefix.count).dropLast(Self.segmentSuffix.count)
            guard let n = Int(number), let segment = s.segments.first(where: { $0.sequence == n }) else { return nil }
            return (segment.bytes, "video/iso.segment")
        }
    }

    /// The playlist (RFC 8216, version 7 for the fMP4 map); nil until the first segment is whole.
    private static func playlist(_ s: State, query: String) -> String? {
        guard s.initSegment != nil, let first = s.segments.first else { return nil }
        let suffix = query.isEmpty ? "" : "?" + query
        let target = Int(s.segments.map(\.duration).max()!.rounded(.up))
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(max(target, 1))",
                     "#EXT-X-MEDIA-SEQUENCE:\(first.sequence)", "#EXT-X-INDEPENDENT-SEGMENTS",
                     "#EXT-X-MAP:URI=\"live/init.mp4\(suffix)\""]
        for segment in s.segments {
            lines.append(String(format: "#EXTINF:%.3f,", segment.duration))
            lines.append("live/\(segment.sequence)\(segmentSuffix)\(suffix)")
        }
        if s.ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }
}
