import FFmpeg
import POSIX
import Synchronization

/// Where a `Muxer`'s normalized packets go: they wait here until every stream's parameters are
/// known (the container's header needs them), then the session starts and takes them, and from
/// then on each packet goes straight to the mux queue (in batches for one file reader). The
/// gate's state lives in its `Locked`; `closed` is an atomic the add path reads without the lock.
final class MuxerStartGate: Sendable {
    private let session: MuxSession
    private var queue: MuxQueue { session.queue }
    private let hasVideo: Bool, hasAudio: Bool
    /// Packets per queue push (one lock round): `fileReadingBatch` for one file reader, else 1.
    private let pushBatch: Int
    private let closed = Atomic<Bool>(false)
    private struct State: @unchecked Sendable {  // Packets and parameters cross threads only inside the lock
        var started = false
        var pending: [EncodedPacket] = []
        var outbox: [EncodedPacket] = []
        var videoParameters: CodecParameters?, audioParameters: CodecParameters?
        var ready: Bool { videoParameters != nil || audioParameters != nil }
    }
    private let state = Locked(State())

    /// Packets that may wait for the other stream's parameters before that is an error.
    static let pendingLimit = 4096
    /// Packets per queue push with one producer reading files (`pushBatch`).
    static let fileReadingBatch = 64

    init(session: MuxSession, streams: [StreamKind], pushBatch: Int) {
        self.session = session
        hasVideo = streams.contains(.video)
        hasAudio = streams.contains(.audio)
        self.pushBatch = pushBatch
    }

    /// Throws once the muxer has finished.
    func checkOpen() throws {
        // A mux thread failure shows when the queue refuses a packet (`enqueue`): reading it here
        // would race with the mux thread.
        if closed.load(ordering: .relaxed) { throw LiveMuxError.invalid("the muxer has finished: packets can no longer be added") }
    }

    /// A stream's parameters became known (called under that stream's own lock).
    func setParameters(_ parameters: CodecParameters, of kind: StreamKind) {
        state.withLock { s in if kind == .video { s.videoParameters = parameters } else { s.audioParameters = parameters } }
    }

    /// What `enqueue` does once the lock is let go.
    private enum Then {
        case nothing, push(EncodedPacket), pushBatch([EncodedPacket])
    }

    func enqueue(_ packet: consuming EncodedPacket) throws {
        let packet = packet
        let then: Then = try state.withLock { s in
            if !s.started {
                s.pending.append(packet)
                if (!hasVideo || s.videoParameters != nil) && (!hasAudio || s.audioParameters != nil) {
                    try startLocked(&s)
                } else if s.pending.count > Self.pendingLimit {
                    let missing = s.videoParameters == nil ? "video parameter sets (SPS/PPS) or frame size" : "the AAC configuration"
                    let count = s.pending.count
                    s.pending.removeAll()
                    throw LiveMuxError.input("\(count) packets arrived but no \(missing): give them as extradata, or send them before the first keyframe")
                }
                return .nothing
            }
            guard pushBatch > 1 else { return .push(packet) }
            s.outbox.append(packet)
            guard s.outbox.count >= pushBatch else { return .nothing }
            var batch: [EncodedPacket] = []
            swap(&batch, &s.outbox)
            s.outbox.reserveCapacity(pushBatch)
            return .pushBatch(batch)
        }
        switch then {
        case .nothing: break
        case .push(let p): try check(queue.push(p))
        case .pushBatch(let batch): try check(queue.push(contentsOf: batch))
        }
    }

    /// Closes the gate (false: it was closed already): starts the session if it never started,
    /// with the streams that have parameters, and ends the queue. `failure`: why it could not start.
    func close() -> (first: Bool, failure: Error?) {
        let closing: (first: Bool, failure: Error?, running: Bool, batch: [EncodedPacket]) = state.withLock { s in
            if closed.load(ordering: .relaxed) { return (false, nil, false, []) }
            closed.store(true, ordering: .relaxed)
            var failure: Error? = nil
            if !s.started {
                if !s.ready {
                    failure = LiveMuxError.input("no stream ever had its parameters (no SPS/PPS, no AAC config): nothing was written")
                } else {
                    do { try startLocked(&s) } catch { failure = error }
                }
            }
            defer { s.outbox.removeAll() }
            return (true, failure, s.started, s.outbox)
        }
        if closing.running {
            if !closing.batch.isEmpty { _ = queue.push(contentsOf: closing.batch) }
            if hasVideo { queue.end(.video) }
            if hasAudio { queue.end(.audio) }
        }
        return (closing.first, closing.failure)
    }

    /// Throws why the queue refused a packet.
    private func check(_ accepted: Bool) throws {
        if !accepted {
            // The queue refuses only after cancel(), and the mux thread sets its failure first.
            throw session.muxFailure ?? LiveMuxError.output("the muxer was stopped (cancel() or a failed sink)")
        }
    }

    /// Starts the session's writers and mux thread and queues what waited. Under the lock.
    private func startLocked(_ s: inout State) throws {
        var streams: [ContainerWriter.StreamDescription] = []
        if let p = s.videoParameters { streams.append(.init(kind: .video, parameters: p, timeBase: .milliseconds)) }
        if let p = s.audioParameters { streams.append(.init(kind: .audio, parameters: p, timeBase: Rational(1, Int32(p.sampleRate)))) }
        try session.start(streams: streams)
        s.started = true
        if hasVideo && s.videoParameters == nil { queue.end(.video) }
        if hasAudio && s.audioParameters == nil { queue.end(.audio) }
        // All at once and without waiting for room: with a thread per stream, the room a full
        // video queue needs can only come from the next audio packet, which this very thread
        // (holding the lock) is to add after this one (it deadlocked; MuxerPendingPushTests).
        let waiting = s.pending
        s.pending.removeAll()
        queue.push(contentsOf: waiting, waitingForRoom: false)
    }
}
