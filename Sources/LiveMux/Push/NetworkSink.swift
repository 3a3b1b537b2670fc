import Foundation
import FFmpeg
import POSIX

/// A network output (`rtmp://`, `srt://`, `tcp://`, `udp://`) with its own bounded queue and writer
/// thread, so a slow or dead server never blocks the mux thread, the recording or other outputs.
///
/// The mux thread calls `write` (which only queues) and `close`; the writer thread connects, sends
/// the header and the chunks, and on a failure reconnects with backoff, sending fresh headers and
/// restarting at a video keyframe; its `LinkWatcher` samples the link. Its threads start in `start`,
/// never in `init`, so a sink built for a session that then fails to build holds nothing.
/// What its threads share lives in one `Locked` (`State`), the watcher's fields too.
final class NetworkSink: ChunkSink, Sendable {
    let name: String
    /// The output's id, which tells two pushes with one masked name apart.
    let id: OutputID
    private let url: String
    private let policy: ReconnectPolicy
    private let reconnects: Bool
    private let tls: TLSVerification
    private let report: @Sendable (String) -> Void
    private let countDropped: @Sendable (Int) -> Void
    private let interruption = NetworkOutput.Interruption()

    private let tuning: Tuning
    /// What the mux thread, the writer and the watcher share.
    struct State {
        var queue: OutputQueue
        var header: Chunk?
        var closing = false
        /// The writer and the link watcher, from `start`; `close` joins them.
        var threads: [WorkerThread] = []
        /// Set when the output has been given up; `write` then throws it so the mux thread drops the sink.
        var failure: Error?
        var link = LinkWatcher.Link()
        /// What the dashboard and `--stats` show.
        var connection = ConnectionState.connecting
        /// The control API asked for a new connection (a server moved, a key changed behind it).
        var reconnectAsked = false
    }
    private let state: Locked<State>
    private let watcher: LinkWatcher

    /// A write blocked for 5 s counts as a failure; SRT's live mode drops unsent data at close
    /// unless it may linger, which would lose the end of the stream (the ASF trailer's last packet).
    private var protocolOptions: [(String, String)] {
        var options = [("rw_timeout", "5000000")]
        if url.lowercased().hasPrefix("srt:") { options.append(("linger", "2")) }
        // libavformat's tcp protocol (under rtmp:// too) bounds the kernel's buffer before it
        // connects; NetworkOutput's socket is bounded again once found, for every TCP protocol.
        options.append(("send_buffer_size", String(tuning.sendBufferBytes)))
        return options + tls.protocolOptions(for: url)
    }

    /// How long `close` lets a slow output finish sending before abandoning its blocked write.
    static let closeGraceSeconds = 3.0

    /// How the output watches its link and bounds its latency.
    struct Tuning: Sendable {
        /// Seconds behind real time past which the output skips to the newest keyframe.
        var maxLatency: Double = 3
        /// What the kernel may hold for this output (`SO_SNDBUF`, about; Linux doubles it).
        var sendBufferBytes = 64 * 1024
        /// The primary output's samples move the video bit rate.
        var adaptive: AdaptiveBitrate?
    }

    /// Schemes whose connection can be made again after it failed (udp has no connection).
    static let reconnectingSchemes: Set<String> = ["rtmp", "rtmps", "rtmpt", "rtmpe", "rtmpte", "rtmpts", "srt", "tcp"]

    /// - Parameter id: the output's id, which its snapshot carries.
    init(url: String, id: OutputID, policy: ReconnectPolicy, queueLimit: Int, tuning: Tuning = Tuning(), tls: TLSVerification = TLSVerification(),
         report: @escaping @Sendable (String) -> Void, countDropped: @escaping @Sendable (Int) -> Void) {
        self.url = url
        self.tuning = tuning
        self.tls = tls
        name = maskedURL(url)
        self.id = id
        self.policy = policy
        let scheme = url.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        reconnects = Self.reconnectingSchemes.contains(scheme)
        self.report = report
        self.countDropped = countDropped
        state = Locked(State(queue: OutputQueue(limit: queueLimit)))
        watcher = LinkWatcher(id: id, name: name, tuning: tuning, state: state, report: report)
    }

    /// Starts the writer and the link watcher (once).
    func start() {
        state.withLock { s in
            guard s.threads.isEmpty else { return }
            s.threads = [WorkerThread.spawn("livemux-net") { [self] in run() },
                         WorkerThread.spawn("livemux-net-watch") { [self] in watcher.run(countDropped: noteDrops) }]
        }
    }

    /// The output's backlog, link rate and latency skips, for `--stats` and the progress line.
    var snapshot: NetworkOutputSnapshot { watcher.snapshot }

    func write(_ chunk: Chunk) throws {
        let (dropped, wake): (Int, Bool) = try state.withLock { s in
            if let failure = s.failure { throw failure }
            if chunk.kind == .header {
                s.header = chunk
                return (0, true)
            }
            // The writer waits only for a header or an empty queue to fill.
            let wasEmpty = s.queue.isEmpty
            let before = s.queue.dropped
            switch s.queue.push(chunk) {
            case .queued, .dropped: break
            case .overflow:
                // Only audio and keyframes are left and still the output does not keep up: start
                // over at the next keyframe rather than grow without bound.
                s.queue.restartAtKeyframe()
            }
            return (s.queue.dropped - before, wasEmpty)
        }
        noteDrops(dropped)
        if wake { state.broadcast() }
    }

    /// Closes the connection after the chunk being written and connects again at once, from the
    /// newest keyframe; false when the output is not connected (it is already trying, or gave up).
    func reconnect() -> Bool {
        let live = state.withLock { s in
            guard s.connection == .live, !s.closing else { return false }
            s.reconnectAsked = true
            return true
        }
        if live { state.broadcast() }
        return live
    }

    /// Sends what is queued (waiting at most 3 s, then abandoning a stuck write), then closes the connection.
    func close() throws {
        let threads = state.withLock { s in
            s.closing = true
            return s.threads
        }
        state.broadcast()
        guard !threads.isEmpty else { return }
        let deadline = Timestamp.monotonicMicroseconds() + Int64(Self.closeGraceSeconds * 1_000_000)
        let finished = state.withLock(waitingUntil: { $0.link.writerDone }, deadline: deadline) { _, done in done }
        if !finished {
            interruption.interrupt()
            state.broadcast()
        }
        threads.forEach { $0.join() }
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    private func noteDrops(_ n: Int) {
        guard n > 0 else { return }
        countDropped(n)
    }

    /// Drops what is queued up to the next keyframe (a connection is new or gone).
    private func restartAtKeyframe() {
        noteDrops(state.withLock { s in
            let before = s.queue.dropped
            s.queue.restartAtKeyframe()
            return s.queue.dropped - before
        })
    }

    // MARK: the writer thread

    private func run() {
        defer { watcher.writerFinished() }
        var failures = 0
        while true {
            // Wait for the header: it is the first thing every connection sends.
            let (header, stop) = state.withLock(waitingUntil: { $0.header != nil || $0.closing }) { s, _ in
                (s.header, s.closing && (s.header == nil || s.queue.isEmpty))
            }
            guard let header, !stop else { return }

            let output: NetworkOutput
            do {
                output = try NetworkOutput(url: url, displayName: name, options: protocolOptions, interruption: interruption)
                output.socket?.boundSendBuffer(tuning.sendBufferBytes)
                watcher.connecting(output.socket)
                try write(header, to: output)
            } catch {
                watcher.setConnected(false)
                guard retry(after: error, failures: &failures) else { return }
                continue
            }
            if failures > 0 {
                report("output \(name): connected again at reconnect attempt \(failures)")
                // Whatever piled up while disconnected is stale: start at the newest keyframe.
                restartAtKeyframe()
            }
            failures = 0
            watcher.setConnected(true)
            state.withLock { $0.connection = .live }
            do {
                let asked = try send(to: output)
                watcher.setConnected(false)
                try? output.close()
                if asked {
                    report("output \(name): reconnecting, as asked")
                    restartAtKeyframe()
                    state.withLock { $0.connection = .connecting }
                    continue
                }
                state.withLock { $0.connection = .ended }
                return
            } catch {
                watcher.setConnected(false)
                // This connection is gone: what is queued restarts at a keyframe on the next one.
                restartAtKeyframe()
                guard retry(after: error, failures: &failures) else { return }
            }
        }
    }

    /// Sends queued chunks until the trailer has gone (or closing with nothing left); true when a
    /// new connection was asked for instead.
    private func send(to output: NetworkOutput) throws -> Bool {
        while true {
            let (chunk, asked) = state.withLock(waitingUntil: { !$0.queue.isEmpty || $0.closing || $0.reconnectAsked }) { s, _ in
                defer { s.reconnectAsked = false }
                return s.reconnectAsked ? (nil, true) : (s.queue.pop(), false)
            }
            if asked { return true }
            guard let chunk else { return false }  // closing and drained
            if interruption.isRequested { throw LiveMuxError.output("\(name): interrupted") }
            try write(chunk, to: output)
            if chunk.kind == .trailer { return false }
        }
    }

    /// Writes one chunk, telling the monitor where its bytes are.
    private func write(_ chunk: Chunk, to output: NetworkOutput) throws {
        watcher.willWrite(chunk)
        try chunk.withUnsafeBytes { try output.write($0) }
        watcher.didWrite(chunk)
    }

    /// Logs the failure and waits before the next attempt; false when the output is given up.
    /// `failures` counts consecutive failed connections: the first, then each reconnect attempt.
    private func retry(after error: Error, failures: inout Int) -> Bool {
        failures += 1
        // A refused certificate or passphrase is refused again on every try: give up at once (nothing was sent).
        if let refused = error as? TLSVerificationFailure {
            state.withLock { $0.failure = LiveMuxError.output("\(name): \(tls.explain(refused))") }
            return false
        }
        if error is SRTPassphraseRefusal {
            state.withLock {
                $0.failure = LiveMuxError.output("\(name): the SRT peer refused the passphrase; give the one it expects"
                                                 + " (passphrase=, 10 to 79 characters, and the same pbkeylen), or none if it has none")
            }
            return false
        }
        let message = Self.describe(error)
        let closing = state.withLock { $0.closing }
        let attempted = failures - 1
        if closing || interruption.isRequested || !reconnects || attempted >= policy.attempts {
            // The mux thread reports this when `write` or `close` throws it, and drops the sink.
            let tries = "\(attempted) reconnect attempt\(attempted == 1 ? "" : "s")"
            let why = !reconnects ? "" : closing ? "not connected when the recording ended (\(tries)): " : attempted > 0 ? "gave up after \(tries): " : ""
            let failure = interruption.isRequested
                ? LiveMuxError.output("\(name): abandoned, still sending \(Int(Self.closeGraceSeconds)) s after the end (the receiver reads too slowly)")
                : LiveMuxError.output("\(name): \(why)\(message) (check that the server is up and the URL is right)")
            state.withLock { s in
                s.failure = failure
                s.connection = .givenUp
            }
            return false
        }
        let delay = policy.delay(beforeAttempt: failures, random: Double.random(in: 0..<1))
        state.withLock { $0.connection = .reconnecting(attempt: failures, of: policy.attempts) }
        report("output \(name): \(message); reconnect attempt \(failures) of \(policy.attempts) in \(String(format: "%.1f", delay)) s")
        // Closing while reconnecting: one last try to deliver what is left.
        let deadline = Timestamp.monotonicMicroseconds() + Int64(delay * 1_000_000)
        state.withLock(waitingUntil: { $0.closing }, deadline: deadline) { _, _ in }
        return true
    }

    private static func describe(_ error: Error) -> String {
        if let e = error as? FFmpegError { return e.message }
        return String(describing: error)
    }
}
