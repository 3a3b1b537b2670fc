import FFmpeg
import POSIX

/// Reads a live device on a thread of its own, a few packets ahead of its capture thread, so that
/// a device that stops delivering without failing shows as a stall: libavdevice's pulse waits for
/// a stopped daemon (SIGSTOP, a hung machine) without consulting the interrupt callback, and that
/// wait would otherwise hold the capture thread, and with it the whole recording, for ever. An
/// input whose reads may block (a pipe whose writer stalls: `read(2)` does not consult the
/// interrupt callback either) is read through one too, so that a stop never waits for its read.
///
/// A reader that is given up on (`abandon`) ends with the read it is in, whenever that returns;
/// the device is closed then, on its thread.
///
/// The reader's queue, flags and read times live in `state`.
final class DeviceReader: Sendable {
    /// What `next` found.
    enum Next {
        case packet(Packet)
        /// The device ended (or a stop interrupted its read).
        case ended
        /// Its read failed.
        case failed(any Error)
        /// Nothing within the wait, or `wake()` was called.
        case waiting
    }

    private struct State {
        var ready: [Packet] = []
        /// Packets handed back (`recycle`) to read into again.
        var spare: [Packet] = []
        var end: Next?
        var abandoned = false
        var woken = false
        /// When the last packet was read, or the reader started (µs, monotonic), and whether any was.
        var lastRead = Timestamp.monotonicMicroseconds(), readAny = false
    }
    private let state = Locked(State())
    /// Packets read ahead of the capture thread before the reader waits for it.
    static let readAhead = 4

    private init() {}

    /// Starts reading `device` on a thread of its own, detached: it ends with the device.
    static func start(_ device: InputDevice) -> DeviceReader {
        let reader = DeviceReader()
        WorkerThread.spawn("livemux-device") { reader.run(device) }.detach()
        return reader
    }

    private func run(_ device: InputDevice) {
        while true {
            // nil: abandoned; else a spare packet to read into, if there is one.
            let taken: Packet?? = state.withLock(waitingUntil: { $0.abandoned || $0.ready.count < Self.readAhead }) { s, _ in
                s.abandoned ? nil : .some(s.spare.popLast())
            }
            guard let packet = taken else { return }
            var outcome: Next
            do {
                let p = try packet ?? Packet()
                outcome = try device.read(into: p) ? .packet(p) : .ended
            } catch {
                outcome = .failed(error)
            }
            let done = state.withLock { s in
                if case .packet(let p) = outcome {
                    s.ready.append(p)
                    (s.lastRead, s.readAny) = (Timestamp.monotonicMicroseconds(), true)
                } else {
                    s.end = outcome
                }
                return s.abandoned || s.end != nil
            }
            state.broadcast()
            if done { return }
        }
    }

    /// The next packet read, the device's end or failure (once what was read before it is taken),
    /// or `.waiting` when none of these came by `deadline` (µs, monotonic) or `wake()` was called.
    func next(until deadline: Int64) -> Next {
        let next: Next = state.withLock(waitingUntil: { !$0.ready.isEmpty || $0.end != nil || $0.woken }, deadline: deadline) { s, _ in
            s.woken = false
            if !s.ready.isEmpty { return .packet(s.ready.removeFirst()) }
            return s.end ?? .waiting
        }
        // A packet taken makes room for the reader.
        if case .packet = next { state.broadcast() }
        return next
    }

    /// For an input read without a deadline (one whose reads may block): the next packet, or nil
    /// at its end or once `wake()` was called (a stop); its read's failure is thrown unless
    /// `stopping` (a stop's interrupt fails it).
    func nextPacket(stopping: () -> Bool) throws -> Packet? {
        switch next(until: .max) {
        case .packet(let packet): return packet
        case .ended, .waiting: return nil
        case .failed(let error): if stopping() { return nil } else { throw error }
        }
    }

    /// Since when nothing was read (µs, monotonic), and whether anything was since the start.
    var quiet: (since: Int64, afterData: Bool) { state.withLock { ($0.lastRead, $0.readAny) } }

    /// Gives a packet `next` returned back, to be read into again.
    func recycle(_ packet: Packet) {
        state.withLock { $0.spare.append(packet) }
    }

    /// Makes a waiting `next` return `.waiting` (from any thread: a stop).
    func wake() {
        state.withLock { $0.woken = true }
        state.broadcast()
    }

    /// Gives the device up: its thread ends after the read it is in.
    func abandon() {
        state.withLock { s in
            s.abandoned = true
            s.ready.removeAll()
            s.spare.removeAll()
        }
        state.broadcast()
    }
}
