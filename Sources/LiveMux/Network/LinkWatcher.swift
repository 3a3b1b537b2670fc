import Foundation
import FFmpeg
import POSIX

/// A network output's link, sampled every 20 ms on a thread of its own until the writer has
/// finished: the backlog and link rate, the `--max-latency` skips and, for the primary output,
/// the adaptive bit rate. Locking: the sink's `condition` (`lock`) guards every `var`, so a
/// sample sees the queue and the writer's bytes at one instant; no method is called holding it.
final class LinkWatcher: @unchecked Sendable {
    private let name: String
    private let tuning: NetworkSink.Tuning
    private let lock: NSCondition
    private let report: @Sendable (String) -> Void

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

    /// How often the link is sampled (µs): often enough to tell a busy link from an idle one
    /// between two frames.
    static let sampleInterval: Int64 = 20_000
    /// How often the primary output's samples reach the bit-rate controller (µs).
    static let controlInterval: Int64 = 250_000

    init(name: String, tuning: NetworkSink.Tuning, lock: NSCondition, report: @escaping @Sendable (String) -> Void) {
        self.name = name
        self.tuning = tuning
        self.lock = lock
        self.report = report
    }

    /// The output's backlog, link rate and latency skips, for `--stats` and the progress line.
    var snapshot: NetworkOutputSnapshot {
        lock.lock()
        defer { lock.unlock() }
        return NetworkOutputSnapshot(name: name, backlogMs: status.backlogMs, linkKbps: status.linkBps / 1000,
                                     latencySkips: latencySkips, kernelVisible: socket != nil)
    }

    // MARK: what the writer tells it

    /// A new connection: its socket, and a monitor that starts afresh.
    func connecting(_ socket: TCPSocket?) {
        lock.lock()
        self.socket = socket
        monitor.reset()
        lock.unlock()
    }

    /// Up (the header went out), or gone: then its socket is forgotten too.
    func setConnected(_ up: Bool) {
        lock.lock()
        connected = up
        if !up { socket = nil }
        lock.unlock()
    }

    func willWrite(_ chunk: Chunk) {
        lock.lock()
        monitor.willWrite(bytes: chunk.count, captureTime: chunk.captureTime)
        lock.unlock()
    }

    func didWrite(_ chunk: Chunk) {
        lock.lock()
        if case .media(.video, _, _) = chunk.kind { monitor.didWrite(video: true) } else { monitor.didWrite(video: false) }
        lock.unlock()
    }

    func writerFinished() {
        lock.lock()
        writerDone = true
        socket = nil
        lock.unlock()
    }

    // MARK: the watcher thread

    /// Samples until the writer has finished. `oldestQueued` and `skipToNewestKeyframe` (false when
    /// nothing can be skipped) reach the sink's queue and are called holding `lock`.
    func run(oldestQueued: () -> Int64?, skipToNewestKeyframe: () -> Bool) {
        var lastControl: Int64 = 0
        while true {
            usleep(UInt32(Self.sampleInterval))
            let now = Timestamp.monotonicMicroseconds()
            lock.lock()
            if writerDone { lock.unlock(); return }
            let kernel = socket?.sendQueue()
            let s = monitor.sample(at: now, queue: kernel, oldestQueued: oldestQueued())
            status = s
            let steers = connected
            var warn = false
            if s.backlogMs > tuning.maxLatency * 1000 {
                if skipToNewestKeyframe() {
                    if !overLatency { warn = true }
                    overLatency = true
                    latencySkips += 1
                }
            } else if s.backlogMs < tuning.maxLatency * 500 {
                overLatency = false
            }
            lock.unlock()
            if warn {
                report("output \(name): \(String(format: "%.1f", s.backlogMs / 1000)) s behind, over --max-latency \(tuning.maxLatency) s: skipping to the newest keyframe (audio kept)")
            }
            if let adaptive = tuning.adaptive, steers, now - lastControl >= Self.controlInterval {
                lastControl = now
                adaptive.update(at: now, s)
            }
        }
    }
}
