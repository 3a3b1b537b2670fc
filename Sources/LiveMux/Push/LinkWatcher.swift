import Foundation
import FFmpeg
import POSIX

/// A network output's link, sampled every 20 ms on a thread of its own until the writer has
/// finished: the backlog and link rate, the `--max-latency` skips and, for the primary output,
/// the adaptive bit rate. Its fields (`Link`) live in its sink's `Locked` state, beside the
/// queue, so a sample sees the queue and the writer's bytes at one instant; no method is called
/// holding the lock.
final class LinkWatcher: Sendable {
    private let id: OutputID
    private let name: String
    private let tuning: NetworkSink.Tuning
    private let state: Locked<NetworkSink.State>
    private let report: @Sendable (String) -> Void

    /// The watcher's part of its sink's state.
    struct Link {
        /// The connection's TCP socket while connected (nil: none, or not seen), and what it says.
        var socket: TCPSocket?
        var monitor = LinkMonitor()
        var status = LinkMonitor.Status()
        /// Over `--max-latency` since the last time the backlog fell below half of it.
        var overLatency = false
        var latencySkips = 0
        /// The writer thread has returned: the watcher stops too (and `close` waits no more).
        var writerDone = false
        /// A connection is up and has taken the header. Only then do its samples steer the bit
        /// rate: the backlog of an output that is not connected says nothing about any link.
        var connected = false
        /// Bytes the connections took (written to their sockets): all that reached the network.
        var sentBytes: Int64 = 0
    }

    /// How often the link is sampled (µs): often enough to tell a busy link from an idle one
    /// between two frames.
    static let sampleInterval: Int64 = 20_000
    /// How often the primary output's samples reach the bit-rate controller (µs).
    static let controlInterval: Int64 = 250_000

    init(id: OutputID, name: String, tuning: NetworkSink.Tuning, state: Locked<NetworkSink.State>, report: @escaping @Sendable (String) -> Void) {
        self.id = id
        self.name = name
        self.tuning = tuning
        self.state = state
        self.report = report
    }

    /// The output's backlog, link rate and latency skips, for `--stats` and the progress line.
    var snapshot: NetworkOutputSnapshot {
        state.withLock { s in
            NetworkOutputSnapshot(id: id.description, name: name, backlogMs: s.link.status.backlogMs, linkKbps: s.link.status.linkBps / 1000,
                                  latencySkips: s.link.latencySkips, kernelVisible: s.link.socket != nil, state: s.connection,
                                  sentBytes: s.link.sentBytes)
        }
    }

    // MARK: what the writer tells it

    /// A new connection: its socket, and a monitor that starts afresh.
    func connecting(_ socket: TCPSocket?) {
        state.withLock { s in
            s.link.socket = socket
            s.link.monitor.reset()
        }
    }

    /// Up (the header went out), or gone: then its socket is forgotten too.
    func setConnected(_ up: Bool) {
        state.withLock { s in
            s.link.connected = up
            if !up { s.link.socket = nil }
        }
    }

    func willWrite(_ chunk: Chunk) {
        state.withLock { $0.link.monitor.willWrite(bytes: chunk.count, captureTime: chunk.captureTime) }
    }

    func didWrite(_ chunk: Chunk) {
        let video = if case .media(.video, _, _) = chunk.kind { true } else { false }
        state.withLock { s in
            s.link.monitor.didWrite(video: video)
            s.link.sentBytes += Int64(chunk.count)
        }
    }

    /// The writer thread has returned; wakes `close`, which waits for it.
    func writerFinished() {
        state.withLock { s in
            s.link.writerDone = true
            s.link.socket = nil
        }
        state.broadcast()
    }

    // MARK: the watcher thread

    /// Samples until the writer has finished; over `--max-latency`, skips the sink's queue to its
    /// newest keyframe and tells `countDropped` how many chunks that dropped.
    func run(countDropped: (Int) -> Void) {
        var lastControl: Int64 = 0
        while true {
            usleep(UInt32(Self.sampleInterval))
            let now = Timestamp.monotonicMicroseconds()
            let sampled: (status: LinkMonitor.Status, steers: Bool, warn: Bool, dropped: Int)? = state.withLock { s in
                if s.link.writerDone { return nil }
                let kernel = s.link.socket?.sendQueue()
                let status = s.link.monitor.sample(at: now, queue: kernel, oldestQueued: s.queue.oldestCaptureTime)
                s.link.status = status
                var warn = false, dropped = 0
                if status.backlogMs > tuning.maxLatency * 1000 {
                    if s.queue.canSkip {
                        dropped = s.queue.skipToNewestKeyframe()
                        if !s.link.overLatency { warn = true }
                        s.link.overLatency = true
                        s.link.latencySkips += 1
                    }
                } else if status.backlogMs < tuning.maxLatency * 500 {
                    s.link.overLatency = false
                }
                return (status, s.link.connected, warn, dropped)
            }
            guard let sampled else { return }
            if sampled.dropped > 0 { countDropped(sampled.dropped) }
            if sampled.warn {
                report("output \(name): \(String(format: "%.1f", sampled.status.backlogMs / 1000)) s behind, over --max-latency \(tuning.maxLatency) s: skipping to the newest keyframe (audio kept)")
            }
            if let adaptive = tuning.adaptive, sampled.steers, now - lastControl >= Self.controlInterval {
                lastControl = now
                adaptive.update(at: now, sampled.status)
            }
        }
    }
}
