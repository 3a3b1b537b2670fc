import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// One client socket on the server's event loop (non-blocking, edge-triggered), through its
/// phases: reading the request head (bounded in size, and in time by `deadline`), writing an
/// answer, then either lingering until the client closes (so the answer is not lost to a reset
/// over request bytes never read) or, for a stream, being a viewer. A request whose answer is
/// being made elsewhere (a snapshot) waits; an `/events` reader is subscribed: it gets an event
/// when its socket took the last one, and misses it otherwise.
final class HTTPConnection {
    enum Phase { case reading, waiting, answering, lingering, viewing, subscribed }
    enum Read: Equatable { case waiting, request(head: [UInt8], body: [UInt8]), bad, tooLarge, closed }

    let fd: Int32
    let token: UInt64
    private(set) var phase = Phase.reading
    /// When a connection that is not a viewer is closed whatever its state (slowloris protection).
    private(set) var deadline: Date
    private var input: [UInt8] = []
    /// How far `input` was searched for the blank line (a head sent a byte at a time is searched once).
    private var searched = 0
    /// Where the body begins in `input` once the head is complete, and its `Content-Length`.
    private var body: (start: Int, length: Int)?
    private var output: [UInt8] = []
    private var outputSent = 0
    private(set) var viewer: StreamViewer?
    private(set) var fanOut: StreamFanOut?

    static let maxRequestBytes = 8192
    /// The largest body taken (the control API's JSON); past it, 413.
    static let maxBodyBytes = ControlAPI.maxBodyBytes
    static let requestTimeoutSeconds = 5.0
    /// How long a finished answer waits for the client to close before the socket is closed anyway.
    static let lingerSeconds = 1.0

    init(fd: Int32, token: UInt64, now: Date) {
        self.fd = fd
        self.token = token
        deadline = now.addingTimeInterval(Self.requestTimeoutSeconds)
    }

    /// Reads what arrived (into `scratch`, the loop's buffer); the head and its body (of
    /// `Content-Length` bytes) once both are complete.
    func readRequest(_ scratch: inout [UInt8]) -> Read {
        while true {
            if let body, input.count >= body.start + body.length {
                return .request(head: Array(input[..<(body.start - 1)]), body: Array(input[body.start..<(body.start + body.length)]))
            }
            let n: Int
            switch receive(&scratch) {
            case .done(0): return .bad  // the client ended before a complete request
            case .done(let count): n = count
            case .wouldBlock: return .waiting
            case .failed: return .closed
            }
            let limit = body.map { $0.start + $0.length } ?? Self.maxRequestBytes + 1
            input.append(contentsOf: scratch[..<min(n, limit - input.count)])
            guard body == nil else { continue }
            if let end = Self.findBlankLine(input, from: searched) {
                guard let length = HTTPRequest.contentLength(input[..<end]) else { return .bad }
                if length > Self.maxBodyBytes { return .tooLarge }
                body = (end + 1, length)
                continue
            }
            searched = input.count
            if input.count > Self.maxRequestBytes { return .bad }
        }
    }

    /// Reads and discards; true when the client closed or the socket failed.
    func drain(_ scratch: inout [UInt8]) -> Bool {
        while true {
            switch receive(&scratch) {
            case .done(let n): if n == 0 { return true }
            case .wouldBlock: return false
            case .failed: return true
            }
        }
    }

    /// One `recv` into `scratch`.
    private func receive(_ scratch: inout [UInt8]) -> NonBlockingResult<Int> {
        scratch.withUnsafeMutableBytes { buffer in nonBlockingSyscall(where: "recv") { recv(fd, buffer.baseAddress, buffer.count, 0) } }
    }

    /// Answers and then lingers: `flush` writes the bytes.
    func answer(_ bytes: [UInt8], now: Date) {
        output = bytes
        outputSent = 0
        phase = .answering
        deadline = now.addingTimeInterval(Self.lingerSeconds + 1)
    }

    /// Becomes a viewer: the head goes first, then the stream.
    func view(_ head: [UInt8], viewer: StreamViewer, of fanOut: StreamFanOut) {
        output = head
        outputSent = 0
        phase = .viewing
        self.viewer = viewer
        self.fanOut = fanOut
    }

    /// Waits for an answer made elsewhere until `deadline`.
    func wait(until deadline: Date) {
        phase = .waiting
        self.deadline = deadline
    }

    /// Becomes an event reader: the head goes first, then `offer`ed events.
    func subscribe(_ head: [UInt8]) {
        output = head
        outputSent = 0
        phase = .subscribed
    }

    /// Queues an event for a reader whose socket took everything before; false (the event is
    /// dropped) when it has not, so a slow reader holds one event at most.
    func offer(_ event: [UInt8]) -> Bool {
        guard outputSent >= output.count else { return false }
        output = event
        outputSent = 0
        return true
    }

    /// Viewers and event readers stay until they leave; the others have a deadline.
    var isLongLived: Bool { phase == .viewing || phase == .subscribed }

    /// Writes what is pending without blocking; `.finished` when an answer is all written (the
    /// connection then lingers) or a viewer's stream has ended.
    func flush(now: Date) -> StreamViewer.Flush {
        while outputSent < output.count {
            let sent = output.withUnsafeBytes { bytes in
                nonBlockingSyscall(where: "send") { send(fd, bytes.baseAddress! + outputSent, bytes.count - outputSent, Int32(MSG_NOSIGNAL)) }
            }
            switch sent {
            case .done(let n): outputSent += n
            case .wouldBlock: return .blocked
            case .failed: return .failed
            }
        }
        if !output.isEmpty { output = [] }
        if let viewer { return viewer.flush() }
        if phase == .subscribed { return .idle }
        if phase == .answering {
            // Fails only once the peer is gone (ENOTCONN), which the lingering read then sees.
            _ = shutdown(fd, Int32(SHUT_WR))
            phase = .lingering
            deadline = now.addingTimeInterval(Self.lingerSeconds)
        }
        return .finished
    }

    /// The end of the head: the index of the second line feed of a blank line, searched for in
    /// what arrived after the first `from` bytes.
    static func findBlankLine(_ b: [UInt8], from: Int = 0) -> Int? {
        guard b.count >= 2 else { return nil }
        for i in max(1, from)..<b.count where b[i] == 10 {
            if b[i - 1] == 10 { return i }
            if i >= 3 && b[i - 1] == 13 && b[i - 2] == 10 && b[i - 3] == 13 { return i }
        }
        return nil
    }
}
