import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One live stream served over HTTP (`/live.flv`): a sink of its muxer that keeps the header and
/// a GOP cache (the chunks since the latest video keyframe), so a viewer who joins mid-stream
/// starts decoding at once. Each viewer has its own `OutputQueue`; one that falls hopelessly behind
/// is disconnected without touching the others. Locking: `lock` guards every `var`.
final class StreamHub: ChunkSink, @unchecked Sendable {
    let name: String
    let contentType: String
    var isSeekable: Bool { false }
    private let queueLimit: Int
    private let countDropped: @Sendable (Int) -> Void
    private let lock = NSLock()
    private var header: Chunk?
    private var gop: [Chunk] = []
    private var viewers: [ObjectIdentifier: Viewer] = [:]
    private var ended = false
    /// The cache stops growing past this: a GOP longer than it is served from the next keyframe.
    static let gopCacheLimit = 4096

    /// One connected viewer. Locking: `condition` guards `queue`, `ended` and `gone`.
    final class Viewer: @unchecked Sendable {
        let fd: Int32
        let condition = NSCondition()
        var queue: OutputQueue
        var ended = false
        var gone = false
        init(fd: Int32, limit: Int) {
            self.fd = fd
            queue = OutputQueue(limit: limit)
        }
    }

    init(name: String, contentType: String, queueLimit: Int, countDropped: @escaping @Sendable (Int) -> Void) {
        self.name = name
        self.contentType = contentType
        self.queueLimit = queueLimit
        self.countDropped = countDropped
    }

    var viewerCount: Int { lock.lock(); defer { lock.unlock() }; return viewers.count }

    func write(_ chunk: Chunk) throws {
        lock.lock()
        defer { lock.unlock() }
        switch chunk.kind {
        case .header: header = chunk
        case .media(.video, _, true): gop = [chunk]
        case .media:
            if !gop.isEmpty && gop.count < Self.gopCacheLimit { gop.append(chunk) } else { gop = [] }
        case .trailer: ended = true
        }
        for viewer in viewers.values { deliver(chunk, to: viewer) }
    }

    private func deliver(_ chunk: Chunk, to viewer: Viewer) {
        viewer.condition.lock()
        defer { viewer.condition.unlock() }
        let before = viewer.queue.dropped
        if viewer.queue.push(chunk) == .overflow {
            // A viewer that reads nothing: cut it off rather than hold its backlog.
            viewer.gone = true
            shutdown(viewer.fd, Int32(SHUT_RDWR))
        }
        if chunk.kind == .trailer { viewer.ended = true }
        if viewer.queue.dropped > before { countDropped(viewer.queue.dropped - before) }
        viewer.condition.signal()
    }

    func close() throws {
        lock.lock()
        ended = true
        let all = Array(viewers.values)
        lock.unlock()
        for v in all {
            v.condition.lock()
            v.ended = true
            v.condition.signal()
            v.condition.unlock()
        }
        // Give viewers a moment to receive the end of the stream, then cut off any that lag: only
        // those still here, since one that left closed its descriptor, and the number may already
        // be a new connection's (a viewer leaves `viewers` before it closes, under `lock`).
        let deadline = Date().addingTimeInterval(2)
        while viewerCount > 0 && Date() < deadline { usleep(20_000) }
        lock.lock()
        for v in viewers.values { shutdown(v.fd, Int32(SHUT_RDWR)) }
        lock.unlock()
    }

    /// Runs on the viewer's connection thread: sends the header, the GOP cache, then the live
    /// stream, until the viewer leaves or the stream ends. Closes `fd`.
    func serveViewer(_ fd: Int32, chunked: Bool) {
        let viewer = Viewer(fd: fd, limit: queueLimit)
        lock.lock()
        if ended || header == nil {
            lock.unlock()
            Glibc.close(fd)
            return
        }
        _ = viewer.queue.push(header!)
        if gop.isEmpty {
            // No keyframe cached: start at the next one.
            viewer.queue.restartAtKeyframe()
        }
        for chunk in gop { _ = viewer.queue.push(chunk) }
        let id = ObjectIdentifier(viewer)
        viewers[id] = viewer
        lock.unlock()
        defer {
            lock.lock()
            viewers[id] = nil
            lock.unlock()
            Glibc.close(fd)
        }
        while true {
            viewer.condition.lock()
            while viewer.queue.isEmpty && !viewer.ended && !viewer.gone { viewer.condition.wait() }
            let chunk = viewer.gone ? nil : viewer.queue.pop()
            viewer.condition.unlock()
            guard let chunk else { break }
            if !chunk.isEmpty {
                // Chunked transfer coding: size in hex, CRLF, the bytes, CRLF.
                let bytes = chunked ? Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk.bytes + [13, 10] : chunk.bytes
                if !HTTPServer.sendAll(fd, bytes) { return }
            }
            if chunk.kind == .trailer { break }
        }
        viewer.condition.lock()
        let gone = viewer.gone
        viewer.condition.unlock()
        if chunked && !gone { _ = HTTPServer.sendAll(fd, Array("0\r\n\r\n".utf8)) }
    }
}
