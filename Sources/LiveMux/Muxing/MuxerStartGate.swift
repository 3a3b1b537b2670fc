import Foundation
import FFmpeg
import Synchronization

/// Where a `Muxer`'s normalized packets go: they wait here until every stream's parameters are
/// known (the container's header needs them), then the session starts and takes them, and from
/// then on each packet goes straight to the mux queue (in batches for one file reader).
/// Locking: `lock` guards every `var`; `closed` is written under it and read without it. The
/// fields marked `@exclusivity(unchecked)` follow the rule in docs/architecture.md ("Exclusivity").
final class MuxerStartGate: @unchecked Sendable {
    private let session: MuxSession
    private var queue: MuxQueue { session.queue }
    private let hasVideo: Bool, hasAudio: Bool
    /// Packets per queue push (one lock round): `fileReadingBatch` for one file reader, else 1.
    private let pushBatch: Int
    private let lock = NSLock()
    private let closed = Atomic<Bool>(false)
    @exclusivity(unchecked) private var started = false
    @exclusivity(unchecked) private var pending: [EncodedPacket] = []
    @exclusivity(unchecked) private var outbox: [EncodedPacket] = []
    private var videoParameters: CodecParameters?, audioParameters: CodecParameters?

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
        lock.lock()
        defer { lock.unlock() }
        if kind == .video { videoParameters = parameters } else { audioParameters = parameters }
    }

    func enqueue(_ packet: consuming EncodedPacket) throws {
        lock.lock()
        if !started {
            pending.append(packet)
            let ready = (!hasVideo || videoParameters != nil) && (!hasAudio || audioParameters != nil)
            var failure: Error? = nil
            if ready {
                do { try startLocked() } catch { failure = error }
            } else if pending.count > Self.pendingLimit {
                let missing = videoParameters == nil ? "video parameter sets (SPS/PPS) or frame size" : "the AAC configuration"
                failure = LiveMuxError.input("\(pending.count) packets arrived but no \(missing): give them as extradata, or send them before the first keyframe")
                pending.removeAll()
            }
            lock.unlock()
            if let failure { throw failure }
            return
        }
        guard pushBatch > 1 else {
            lock.unlock()
            try check(queue.push(packet))
            return
        }
        outbox.append(packet)
        var batch: [EncodedPacket] = []
        if outbox.count >= pushBatch {
            swap(&batch, &outbox)
            outbox.reserveCapacity(pushBatch)
        }
        lock.unlock()
        if !batch.isEmpty { try check(queue.push(contentsOf: batch)) }
    }

    /// Closes the gate (false: it was closed already): starts the session if it never started,
    /// with the streams that have parameters, and ends the queue. `failure`: why it could not start.
    func close() -> (first: Bool, failure: Error?) {
        lock.lock()
        if closed.load(ordering: .relaxed) {
            lock.unlock()
            return (false, nil)
        }
        closed.store(true, ordering: .relaxed)
        var failure: Error? = nil
        if !started {
            if videoParameters == nil && audioParameters == nil {
                failure = LiveMuxError.input("no stream ever had its parameters (no SPS/PPS, no AAC config): nothing was written")
            } else {
                do { try startLocked() } catch { failure = error }
            }
        }
        let running = started
        let batch = outbox
        outbox.removeAll()
        lock.unlock()
        if running {
            if !batch.isEmpty { _ = queue.push(contentsOf: batch) }
            if hasVideo { queue.end(.video) }
            if hasAudio { queue.end(.audio) }
        }
        return (true, failure)
    }

    /// Throws why the queue refused a packet.
    private func check(_ accepted: Bool) throws {
        if !accepted {
            // The queue refuses only after cancel(); MuxThread sets `failure` before cancelling,
            // and the queue's lock orders that write before this read.
            throw session.muxFailure ?? LiveMuxError.output("the muxer was stopped (cancel() or a failed sink)")
        }
    }

    /// Starts the session's writers and mux thread and queues what waited. Under `lock`.
    private func startLocked() throws {
        var streams: [ContainerWriter.StreamDescription] = []
        if let p = videoParameters { streams.append(.init(kind: .video, parameters: p, timeBase: .milliseconds)) }
        if let p = audioParameters { streams.append(.init(kind: .audio, parameters: p, timeBase: Rational(1, Int32(p.sampleRate)))) }
        try session.start(streams: streams)
        started = true
        if hasVideo && videoParameters == nil { queue.end(.video) }
        if hasAudio && audioParameters == nil { queue.end(.audio) }
        // All at once and without waiting for room: with a thread per stream, the room a full
        // video queue needs can only come from the next audio packet, which this very thread
        // (holding `lock`) is to add after this one (it deadlocked; MuxerPendingPushTests).
        let waiting = pending
        pending.removeAll()
        queue.push(contentsOf: waiting, waitingForRoom: false)
    }
}
