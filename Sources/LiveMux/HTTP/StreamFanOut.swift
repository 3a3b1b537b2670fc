import Foundation
import FFmpeg

/// The event loop's side of one stream: the header, the GOP cache (the chunks since the newest
/// video keyframe, so a viewer who joins mid-stream starts decoding at once) and the viewers.
/// Every chunk is stored once; the cache and each viewer's backlog hold references to it. Only
/// the loop thread touches it.
final class StreamFanOut {
    let hub: StreamHub
    private(set) var viewers: [UInt64: StreamViewer] = [:]
    private var header: Chunk?
    private var gop: [Chunk] = []
    /// The trailer arrived, or the hub was closed without one.
    private(set) var ended = false
    /// When the loop first saw the hub closed; viewers still there `closeGraceSeconds` later are cut off.
    private(set) var closedAt: Date?
    private var drainReported = false
    /// The cache stops growing past this: a GOP longer than it is served from the next keyframe.
    static let gopCacheLimit = 4096

    init(hub: StreamHub) { self.hub = hub }

    /// Takes what the muxer wrote since the last call, keeps the header and the cache up to date,
    /// and returns the new chunks. `closing` is true the first time the hub is seen closed.
    func absorb(now: Date) -> (chunks: [Chunk], closing: Bool) {
        let (taken, closed) = hub.take()
        var chunks: [Chunk] = []
        chunks.reserveCapacity(taken.count)
        for chunk in taken {
            guard let stable = Self.stable(chunk) else { continue }
            switch stable.kind {
            case .header: header = stable
            case .media(.video, _, true): gop = [stable]
            case .media:
                if !gop.isEmpty && gop.count < Self.gopCacheLimit { gop.append(stable) } else { gop = [] }
            case .trailer: ended = true
            }
            chunks.append(stable)
        }
        var closing = false
        if closed && closedAt == nil {
            closedAt = now
            ended = true
            closing = true
        }
        return (chunks, closing)
    }

    /// Adds a viewer, its backlog started with the header and the cache; false when the stream ended.
    func join(_ viewer: StreamViewer, token: UInt64) -> Bool {
        guard !ended else { return false }
        if let header { _ = viewer.push(header) }
        if gop.isEmpty { viewer.startAtNextKeyframe() }  // no keyframe cached: start at the next one
        for chunk in gop { _ = viewer.push(chunk) }
        viewers[token] = viewer
        return true
    }

    func remove(_ token: UInt64) { viewers[token] = nil }

    /// Once the hub is closed and its viewers are gone (or were cut off), tells `close` so, once.
    func reportDrainedIfDone() {
        guard closedAt != nil, viewers.isEmpty, !drainReported else { return }
        drainReported = true
        hub.viewersDrained()
    }

    /// The bytes at a stable address viewers' vectored writes can point to: the muxer's buffer, or
    /// a copy of an array once for every viewer. Nil only when memory ran out (the chunk is lost).
    private static func stable(_ chunk: Chunk) -> Chunk? {
        if chunk.muxedBytes != nil || chunk.isEmpty { return chunk }
        guard let copy = try? MuxedBytes(copying: chunk.bytes) else { return nil }
        return Chunk(kind: chunk.kind, muxed: copy, captureTime: chunk.captureTime)
    }
}
