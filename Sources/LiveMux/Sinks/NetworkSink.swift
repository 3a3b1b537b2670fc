import Foundation
import FFmpeg
import POSIX

/// A network output (`rtmp://`, `srt://`, `tcp://`, `udp://`) with its own bounded queue and writer
/// thread, so a slow or dead server never blocks the mux thread, the recording or other outputs.
///
/// The mux thread calls `write` (which only queues) and `close`; the writer thread connects, sends
/// the header and the chunks, and on a failure reconnects with backoff, sending fresh headers and
/// restarting at a video keyframe. Its threads start in `start`, never in `init`, so a sink built
/// for a session that then fails to build holds nothing. Locking: `condition` guards every `var`
/// below it.
final class NetworkSink: ChunkSink, @unchecked Sendable {
    let name: String
    private let url: String
    private let policy: ReconnectPolicy
    private let reconnects: Bool
    private let report: @Sendable (String) -> Void
    private let countDropped: @Sendable (Int) -> Void
    private let interruption = NetworkOutput.Interruption()
    private let finished = DispatchSemaphore(value: 0)

    private let tuning: Tuning
    private let condition = NSCondition()
    private var queue: OutputQueue
    private var header: Chunk?
    private var closing = false
    /// The writer and the link watcher, from `start`; `close` joins them.
    private var threads: [WorkerThread] = []
    /// The connection's TCP socket while connected (nil: none, or not seen), and what it says.
    private var socket: TCPSocket?
    private var monitor = LinkMonitor()
    private var status = LinkMonitor.Status()
    /// Over `--max-latency` since the last time the backlog fell below half of it.
    private var overLatency = false
    private var latencySkips = 0
    /// The writer thread has returned: the watcher stops too.
    private var writerDone = false
    /// A connection is up and has taken the header. Only then do its samples steer the bit rate:
    /// the backlog of an output that is not connected says nothing about any link.
    private var connected = false
    /// Set when the output has been given up; `write` then throws it so the mux thread drops the sink.
    private var failure: Error?

    /// A write blocked for 5 s counts as a failure; SRT's live mode drops unsent data at close
    /// unless it may linger, which would lose the end of the stream (the ASF trailer's last packet).
    private var protocolOptions: [(String, String)] {
        var options = [("rw_timeout", "5000000")]
        if url.lowercased().hasPrefix("srt:") { options.append(("linger", "2")) }
        // libavformat's tcp protocol (under rtmp:// too) bounds the kernel's buffer before it
        // connects; NetworkOutput's socket is bounded again once found, for every TCP protocol.
        options.append(("send_buffer_size", String(tuning.sendBufferBytes)))
        return options
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

    /// How often the link is sampled (µs): often enough to tell a busy link from an idle one
    /// between two frames.
    static let sampleInterval: Int64 = 20_000
    /// How often the primary output's samples reach the bit-rate controller (µs).
    static let controlInterval: Int64 = 250_000

    /// Schemes whose connection can be made again after it failed (udp has no connection).
    static let reconnectingSchemes: Set<String> = ["rtmp", "rtmps", "rtmpt", "rtmpe", "rtmpte", "rtmpts", "srt", "tcp"]

    init(url: String, policy: ReconnectPolicy, queueLimit: Int, tuning: Tuning = Tuning(),
         report: @escaping @Sendable (String) -> Void, countDropped: @escaping @Sendable (Int) -> Void) {
        self.url = url
        self.tuning = tuning
        name = maskedURL(url)
        self.policy = policy
        let scheme = url.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        reconnects = Self.reconnectingSchemes.contains(scheme)
        self.report = report
        self.countDropped = countDropped
        queue = OutputQueue(limit: queueLimit)
    }

    /// Starts the writer and the link watcher (once).
    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard threads.isEmpty else { return }
        threads = [WorkerThread.spawn("livemux-net") { [self] in run() },
                   WorkerThread.spawn("livemux-net-watch") { [self] in watch() }]
    }

    /// The output's backlog, link rate and latency skips, for `--stats` and the progress line.
    var snapshot: NetworkOutputSnapshot {
        condition.lock()
        defer { condition.unlock() }
        return NetworkOutputSnapshot(name: name, backlogMs: status.backlogMs, linkKbps: status.linkBps / 1000,
                                     latencySkips: latencySkips, kernelVisible: socket != nil)
    }

    func write(_ chunk: Chunk) throws {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        if chunk.kind == .header { header = chunk; condition.signal(); return }
        let before = queue.dropped
        switch queue.push(chunk) {
        case .queued, .dropped: break
        case .overflow:
            // Only audio and keyframes are left and still the output does not keep up: start over
            // at the next keyframe rather than grow without bound.
            queue.restartAtKeyframe()
        }
        noteDrops(queue.dropped - before)
        condition.signal()
    }

    /// Sends what is queued (waiting at most 3 s, then abandoning a stuck write), then closes the connection.
    func close() throws {
        condition.lock()
        closing = true
        condition.broadcast()
        let threads = self.threads
        condition.unlock()
        guard !threads.isEmpty else { return }
        if finished.wait(timeout: .now() + Self.closeGraceSeconds) == .timedOut {
            interruption.interrupt()
            condition.lock(); condition.broadcast(); condition.unlock()
        }
        threads.forEach { $0.join() }
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
    }

    private func noteDrops(_ n: Int) {
        guard n > 0 else { return }
        countDropped(n)
    }

    // MARK: the writer thread

    private func run() {
        defer {
            condition.lock()
            writerDone = true
            socket = nil
            condition.unlock()
            finished.signal()
        }
        var failures = 0
        var everConnected = false
        while true {
            // Wait for the header: it is the first thing every connection sends.
            condition.lock()
            while header == nil && !closing { condition.wait() }
            let header = self.header
            let stop = closing && (header == nil || queue.isEmpty)
            condition.unlock()
            guard let header, !stop else { return }

            let output: NetworkOutput
            do {
                output = try NetworkOutput(url: url, displayName: name, options: protocolOptions, interruption: interruption)
                output.socket?.boundSendBuffer(tuning.sendBufferBytes)
                condition.lock()
                socket = output.socket
                monitor.reset()
                condition.unlock()
                try write(header, to: output)
            } catch {
                setConnected(false)
                guard retry(after: error, failures: &failures) else { return }
                continue
            }
            if everConnected || failures > 0 {
                report("output \(name): connected again at reconnect attempt \(failures)")
                // Whatever piled up while disconnected is stale: start at the newest keyframe.
                condition.lock()
                let before = queue.dropped
                queue.restartAtKeyframe()
                noteDrops(queue.dropped - before)
                condition.unlock()
            }
            everConnected = true
            failures = 0
            setConnected(true)
            do {
                try send(to: output)
                setConnected(false)
                try? output.close()
                return
            } catch {
                setConnected(false)
                // This connection is gone: what is queued restarts at a keyframe on the next one.
                condition.lock()
                let before = queue.dropped
                queue.restartAtKeyframe()
                noteDrops(queue.dropped - before)
                condition.unlock()
                guard retry(after: error, failures: &failures) else { return }
            }
        }
    }

    /// Sends queued chunks until the trailer has gone (or closing with nothing left).
    private func send(to output: NetworkOutput) throws {
        while true {
            condition.lock()
            while queue.isEmpty && !closing { condition.wait() }
            let chunk = queue.pop()
            condition.unlock()
            guard let chunk else { return }  // closing and drained
            if interruption.isRequested { throw LiveMuxError.output("\(name): interrupted") }
            try write(chunk, to: output)
            if chunk.kind == .trailer { return }
        }
    }

    /// Writes one chunk, telling the monitor where its bytes are.
    private func write(_ chunk: Chunk, to output: NetworkOutput) throws {
        condition.lock()
        monitor.willWrite(bytes: chunk.count, captureTime: chunk.captureTime)
        condition.unlock()
        try chunk.withUnsafeBytes { try output.write($0) }
        condition.lock()
        if case .media(.video, _, _) = chunk.kind { monitor.didWrite(video: true) } else { monitor.didWrite(video: false) }
        condition.unlock()
    }

    /// Up (the header went out), or gone: then its socket is forgotten too.
    private func setConnected(_ up: Bool) {
        condition.lock()
        connected = up
        if !up { socket = nil }
        condition.unlock()
    }

    // MARK: the watcher thread

    /// Samples the link every 20 ms until the writer has finished: the backlog, the link rate,
    /// `--max-latency`, and (primary output) the bit-rate controller.
    private func watch() {
        var lastControl: Int64 = 0
        while true {
            usleep(UInt32(Self.sampleInterval))
            let now = Timestamp.monotonicMicroseconds()
            condition.lock()
            if writerDone { condition.unlock(); return }
            let kernel = socket?.sendQueue()
            let s = monitor.sample(at: now, queue: kernel, oldestQueued: queue.oldestCaptureTime)
            status = s
            let steers = connected
            var warn = false
            if s.backlogMs > tuning.maxLatency * 1000 {
                if queue.canSkip {
                    if !overLatency { warn = true }
                    overLatency = true
                    latencySkips += 1
                    noteDrops(queue.skipToNewestKeyframe())
                }
            } else if s.backlogMs < tuning.maxLatency * 500 {
                overLatency = false
            }
            condition.unlock()
            if warn {
                report("output \(name): \(String(format: "%.1f", s.backlogMs / 1000)) s behind, over --max-latency \(tuning.maxLatency) s: skipping to the newest keyframe (audio kept)")
            }
            if let adaptive = tuning.adaptive, steers, now - lastControl >= Self.controlInterval {
                lastControl = now
                adaptive.update(at: now, s)
            }
        }
    }

    /// Logs the failure and waits before the next attempt; false when the output is given up.
    /// `failures` counts consecutive failed connections: the first, then each reconnect attempt.
    private func retry(after error: Error, failures: inout Int) -> Bool {
        failures += 1
        let message = Self.describe(error)
        condition.lock()
        let closing = self.closing
        condition.unlock()
        let attempted = failures - 1
        if closing || interruption.isRequested || !reconnects || attempted >= policy.attempts {
            // The mux thread reports this when `write` or `close` throws it, and drops the sink.
            let tries = "\(attempted) reconnect attempt\(attempted == 1 ? "" : "s")"
            let why = !reconnects ? "" : closing ? "not connected when the recording ended (\(tries)): " : attempted > 0 ? "gave up after \(tries): " : ""
            condition.lock()
            failure = interruption.isRequested
                ? LiveMuxError.output("\(name): abandoned, still sending \(Int(Self.closeGraceSeconds)) s after the end (the receiver reads too slowly)")
                : LiveMuxError.output("\(name): \(why)\(message) (check that the server is up and the URL is right)")
            condition.unlock()
            return false
        }
        let delay = policy.delay(beforeAttempt: failures, random: Double.random(in: 0..<1))
        report("output \(name): \(message); reconnect attempt \(failures) of \(policy.attempts) in \(String(format: "%.1f", delay)) s")
        condition.lock()
        let deadline = Date().addingTimeInterval(delay)
        while !self.closing && Date() < deadline { _ = condition.wait(until: deadline) }
        // Closing while reconnecting: one last try to deliver what is left.
        condition.unlock()
        return true
    }

    private static func describe(_ error: Error) -> String {
        if let e = error as? FFmpegError { return e.message }
        return String(describing: error)
    }
}
