import FFmpeg
import POSIX

/// Hands each packet of one encode to every mux session it feeds (outputs that share this
/// encode but not the other kind's): the last queue gets the packet, the others a reference to
/// its data, never a copy. A queue that was cancelled (every output of its session stopped) is
/// left out from then on. A session added while the job runs (the control API) joins at this
/// encode's next keyframe, which it asks for, and its audio from that keyframe's time
/// (`LiveJoin`); one removed gets the end of the stream and writes its trailer. Used by its
/// encode's thread; `join`, `leave` and `wantsKeyframe` from any.
final class PacketTee: @unchecked Sendable {
    private struct Branch {
        let queue: MuxQueue
        /// The session the queue belongs to, for `measures`.
        let session: Int
        var open = true
        /// Joined while running: nothing until the video keyframe (or, for audio, its time).
        var join: LiveJoin?
    }
    /// Used by the encode's thread only, after `init`.
    private var branches: [Branch]
    private let statistics: Statistics
    /// Sessions joining or leaving, taken by the encode's thread at its next packet; `retired` once
    /// no session is left, when the encode stops for good and nothing may join it any more.
    private let changes = Locked((joining: [Branch](), leaving: [ObjectIdentifier](), keyframeAsked: false, retired: false))

    init(queues: [MuxQueue], sessions: [Int], statistics: Statistics) {
        precondition(queues.count == sessions.count, "one session per queue")
        branches = zip(queues, sessions).map { Branch(queue: $0, session: $1) }
        self.statistics = statistics
    }

    /// Some session still takes packets (or is joining); false retires the tee.
    var isOpen: Bool {
        branches.contains(where: \.open) || changes.withLock { c in
            if c.joining.isEmpty { c.retired = true }
            return !c.joining.isEmpty
        }
    }

    /// The encode stopped for good: an output asking for its settings needs a new one (any thread).
    var isRetired: Bool { changes.withLock { $0.retired } }

    /// Whether this encode's packets are the recording's now: a session it feeds measures it.
    var measures: Bool { branches.contains { statistics.measures($0.session) } }

    /// A session added while running: its queue gets this encode's packets from `join`'s point on.
    /// False when the encode has stopped for good (`isRetired`).
    func join(_ queue: MuxQueue, session: Int, at join: LiveJoin) -> Bool {
        changes.withLock { c in
            guard !c.retired else { return false }
            c.joining.append(Branch(queue: queue, session: session, join: join))
            c.keyframeAsked = true
            return true
        }
    }

    /// A session removed while running: its queue gets the end of this stream after the packets it has.
    func leave(_ queue: MuxQueue) { changes.withLock { $0.leaving.append(ObjectIdentifier(queue)) } }

    /// Whether a joining session waits for a keyframe: the next frame is forced to be one (once).
    func takeKeyframeRequest() -> Bool {
        changes.withLock { c in
            defer { c.keyframeAsked = false }
            return c.keyframeAsked
        }
    }

    /// Queues the packet for every session still open; false once none is.
    func push(_ packet: Packet, stream: StreamKind, timeBase: Rational, captureTime: Int64, nextDTSAtLeast: Int64?) throws -> Bool {
        applyChanges(stream)
        var last: Int?
        for i in branches.indices where branches[i].open {
            if let join = branches[i].join {
                // Only a session still joining needs the packet's time (most packets: none).
                let time = Timestamp.rescale(packet.pts, from: timeBase, to: .microseconds)
                guard join.admits(stream, keyframe: packet.isKeyframe, at: time) else { continue }
                branches[i].join = nil
            }
            last = i
        }
        for i in branches.indices where branches[i].open && branches[i].join == nil {
            let copy = i == last ? packet : try packet.reference()
            if !branches[i].queue.push(EncodedPacket(stream: stream, packet: copy, timeBase: timeBase, captureTime: captureTime,
                                                     nextDTSAtLeast: nextDTSAtLeast)) {
                branches[i].open = false
            }
        }
        return isOpen
    }

    /// Ends `stream` in every queue (each drains what it holds, then writes its trailers).
    func end(_ stream: StreamKind) {
        applyChanges(stream)
        branches.forEach { $0.queue.end(stream) }
    }

    private func applyChanges(_ stream: StreamKind) {
        let (joining, leaving) = changes.withLock { c in
            defer { (c.joining, c.leaving) = ([], []) }
            return (c.joining, c.leaving)
        }
        branches += joining
        for id in leaving {
            guard let i = branches.firstIndex(where: { ObjectIdentifier($0.queue) == id }) else { continue }
            branches[i].queue.end(stream)
            branches.remove(at: i)
        }
    }
}
