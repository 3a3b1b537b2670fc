import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// One viewer of a live stream, on the server's event loop. It holds no bytes of its own: its
/// backlog is an `OutputQueue` of references to the chunks every viewer shares (so the drop
/// policy is the network outputs' one, decided per viewer), plus the few chunks a non-blocking
/// `sendmsg` is part-way through. HTTP/1.1 viewers get chunked transfer coding, whose size lines
/// are made on the fly in a scratch buffer.
final class StreamViewer {
    enum Flush: Equatable {
        /// The socket is full: go on when it is writable.
        case blocked
        /// Everything queued is written; more when the stream brings it.
        case idle
        /// The stream's end is written: close.
        case finished
        /// The viewer is gone (a reset, a closed socket).
        case failed
    }

    let fd: Int32
    let chunked: Bool
    private var queue: OutputQueue
    /// Popped from the queue, being written; the first one `offset` bytes in (framing included).
    private var sending: [Chunk] = []
    private var offset = 0
    /// The stream ended: write what is queued, then the end of the chunked body.
    private var ending = false
    private var terminatorWritten = 0
    /// Pushed past the queue's hard limit: a viewer that reads nothing, to cut off.
    private(set) var overflowed = false

    static let terminator = Array("0\r\n\r\n".utf8)
    private static let lineEnd = Array("\r\n".utf8)
    /// Chunks one `sendmsg` takes at most (three iovecs each when chunked; IOV_MAX is 1024).
    static let batch = 64

    init(fd: Int32, chunked: Bool, queueLimit: Int) {
        self.fd = fd
        self.chunked = chunked
        queue = OutputQueue(limit: queueLimit)
    }

    /// Queues a chunk under the drop policy; the number of media chunks it made the viewer drop.
    func push(_ chunk: Chunk) -> Int {
        let before = queue.dropped
        if queue.push(chunk) == .overflow { overflowed = true }
        if chunk.kind == .trailer { ending = true }
        return queue.dropped - before
    }

    /// A viewer joining before any keyframe is cached starts at the next one.
    func startAtNextKeyframe() { queue.restartAtKeyframe() }

    /// The stream ended without a trailer (the hub closed): finish with what is queued.
    func end() { ending = true }

    /// Writes as much as the socket takes without blocking.
    func flush() -> Flush {
        while true {
            while sending.count < Self.batch, let next = queue.pop() {
                // An empty chunk would end a chunked body; StreamFanOut gives only chunks with a buffer.
                if !next.isEmpty, next.muxedBytes != nil { sending.append(next) }
            }
            if sending.isEmpty {
                guard ending else { return .idle }
                return writeTerminator()
            }
            switch sendBatch() {
            case .done(let n): consume(n)
            case .wouldBlock: return .blocked
            case .failed: return .failed
            }
        }
    }

    private func framedCount(_ chunk: Chunk) -> Int {
        chunked ? String(chunk.count, radix: 16).utf8.count + 2 + chunk.count + 2 : chunk.count
    }

    /// Drops `n` written bytes from the front of `sending`.
    private func consume(_ n: Int) {
        var left = offset + n
        var done = 0
        while done < sending.count {
            let size = framedCount(sending[done])
            guard left >= size else { break }
            left -= size
            done += 1
        }
        sending.removeFirst(done)
        offset = left
    }

    /// One `sendmsg` of the chunks in `sending` (MSG_NOSIGNAL: a closed socket is EPIPE, not a
    /// signal); the bytes written.
    private func sendBatch() -> NonBlockingResult<Int> {
        var sizeLines: [UInt8] = []
        var spans: [(line: Range<Int>?, body: UnsafeRawBufferPointer)] = []
        for chunk in sending {
            guard let bytes = chunk.muxedBytes else { break }
            var line: Range<Int>? = nil
            if chunked {
                let start = sizeLines.count
                sizeLines += Array(String(chunk.count, radix: 16).utf8) + Self.lineEnd
                line = start..<sizeLines.count
            }
            spans.append((line, UnsafeRawBufferPointer(start: bytes.baseAddress, count: bytes.count)))
        }
        return sizeLines.withUnsafeBytes { lines in
            Self.lineEnd.withUnsafeBytes { crlf in
                var vectors: [iovec] = []
                vectors.reserveCapacity(spans.count * 3)
                for span in spans {
                    if let line = span.line { vectors.append(Self.vector(UnsafeRawBufferPointer(rebasing: lines[line]))) }
                    vectors.append(Self.vector(span.body))
                    if chunked { vectors.append(Self.vector(crlf)) }
                }
                Self.skip(offset, in: &vectors)
                return vectors.withUnsafeMutableBufferPointer { v in
                    var message = msghdr()
                    message.msg_iov = v.baseAddress
                    message.msg_iovlen = v.count
                    return nonBlockingSyscall(where: "sendmsg") { Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
                }
            }
        }
    }

    private static func vector(_ b: UnsafeRawBufferPointer) -> iovec {
        iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress), iov_len: b.count)
    }

    /// Advances the vectors past the `n` bytes already written.
    private static func skip(_ n: Int, in vectors: inout [iovec]) {
        var left = n
        var first = 0
        while left > 0 && first < vectors.count {
            let len = vectors[first].iov_len
            if left >= len {
                left -= len
                first += 1
            } else {
                vectors[first].iov_base = vectors[first].iov_base! + left
                vectors[first].iov_len -= left
                left = 0
            }
        }
        vectors.removeFirst(first)
    }

    private func writeTerminator() -> Flush {
        guard chunked else { return .finished }
        while terminatorWritten < Self.terminator.count {
            let sent = Self.terminator.withUnsafeBytes { bytes in
                nonBlockingSyscall(where: "send") { send(fd, bytes.baseAddress! + terminatorWritten, bytes.count - terminatorWritten, Int32(MSG_NOSIGNAL)) }
            }
            switch sent {
            case .done(let n): terminatorWritten += n
            case .wouldBlock: return .blocked
            case .failed: return .failed
            }
        }
        return .finished
    }
}
