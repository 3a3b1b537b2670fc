import FFmpeg

/// Hands each packet of one encode to every mux session it feeds (outputs that share this
/// encode but not the other kind's): the last queue gets the packet, the others a reference to
/// its data, never a copy. A queue that was cancelled (every output of its session stopped)
/// is left out from then on. Used by its encode's thread only.
final class PacketTee {
    private let queues: [MuxQueue]
    /// The session each queue belongs to, for `measures`.
    private let sessions: [Int]
    /// Which of `queues` still take packets.
    private var open: [Bool]
    private let statistics: Statistics

    init(queues: [MuxQueue], sessions: [Int], statistics: Statistics) {
        precondition(queues.count == sessions.count && !queues.isEmpty, "one session per queue, at least one")
        self.queues = queues
        self.sessions = sessions
        open = queues.map { _ in true }
        self.statistics = statistics
    }

    /// Some session still takes packets.
    var isOpen: Bool { open.contains(true) }

    /// Whether this encode's packets are the recording's now: a session it feeds measures it.
    var measures: Bool { sessions.contains(where: statistics.measures) }

    /// Queues the packet for every session still open; false once none is.
    func push(_ packet: Packet, stream: StreamKind, timeBase: Rational, captureTime: Int64, nextDTSAtLeast: Int64?) throws -> Bool {
        let last = open.lastIndex(of: true)
        for i in queues.indices where open[i] {
            let copy = i == last ? packet : try packet.reference()
            if !queues[i].push(EncodedPacket(stream: stream, packet: copy, timeBase: timeBase, captureTime: captureTime,
                                             nextDTSAtLeast: nextDTSAtLeast)) {
                open[i] = false
            }
        }
        return isOpen
    }

    /// Ends `stream` in every queue (each drains what it holds, then writes its trailers).
    func end(_ stream: StreamKind) { queues.forEach { $0.end(stream) } }
}
