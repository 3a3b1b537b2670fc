import Foundation
import FFmpeg

/// Reads a live device on a thread of its own, a few packets ahead of its capture thread, so that
/// a device that stops delivering without failing shows as a stall: libavdevice's pulse waits for
/// a stopped daemon (SIGSTOP, a hung machine) without consulting the interrupt callback, and that
/// wait would otherwise hold the capture thread, and with it the whole recording, for ever.
///
/// A reader that is given up on (`abandon`) ends with the read it is in, whenever that returns;
/// the device is closed then, on its thread.
///
/// Locking: `condition` guards `ready`, `spare`, `end`, `abandoned`, `woken`, `lastRead` and
/// `readAny`.
final class DeviceReader: @unchecked Sendable {
    /// What `next` found.
    enum Next {
        case packet(Packet)
        /// The device ended (or a stop interrupted its read).
        case ended
        /// Its read failed: why.
        case failed(String)
        /// Nothing within the wait, or `wake()` was called.
        case waiting
    }

    private let condition = NSCondition()
    private var ready: [Packet] = []
    /// Packets handed back (`recycle`) to read into again.
    private var spare: [Packet] = []
    private var end: Next?
    private var abandoned = false
    private var woken = false
    /// When the last packet was read, or the reader started (µs, monotonic), and whether any was.
    private var lastRead: Int64, readAny = false
    /// Packets read ahead of the capture thread before the reader waits for it.
    static let readAhead = 4

    private init() { lastRead = Timestamp.monotonicMicroseconds() }

    /// Starts reading `device` on a thread of its own, detached: it ends with the device.
    static func start(_ device: InputDevice) -> DeviceReader {
        let reader = DeviceReader()
        WorkerThread.spawn("livemux-device") { reader.run(device) }.detach()
        return reader
    }

    private func run(_ device: InputDevice) {
        while true {
            condition.lock()
            while !abandoned && ready.count >= Self.readAhead { condition.wait() }
            let packet = abandoned ? nil : spare.popLast()
            let stop = abandoned
            condition.unlock()
            if stop { return }
            var outcome: Next
            do {
                let p = try packet ?? Packet()
                outcome = try device.read(into: p) ? .packet(p) : .ended
            } catch {
                outcome = .failed(DeviceOutage.describe(error))
            }
            condition.lock()
            if case .packet(let p) = outcome {
                ready.append(p)
                (lastRead, readAny) = (Timestamp.monotonicMicroseconds(), true)
            } else {
                end = outcome
            }
            condition.broadcast()
            let done = abandoned || end != nil
            condition.unlock()
            if done { return }
        }
    }

    /// The next packet read, the device's end or failure (once what was read before it is taken),
    /// or `.waiting` when none of these came by `deadline` (µs, monotonic) or `wake()` was called.
    func next(until deadline: Int64) -> Next {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && end == nil && !woken {
            let left = deadline - Timestamp.monotonicMicroseconds()
            guard left > 0 else { break }
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(left) / 1_000_000))
        }
        woken = false
        if !ready.isEmpty {
            condition.broadcast()
            return .packet(ready.removeFirst())
        }
        return end ?? .waiting
    }

    /// Since when nothing was read (µs, monotonic), and whether anything was since the start.
    var quiet: (since: Int64, afterData: Bool) {
        condition.lock()
        defer { condition.unlock() }
        return (lastRead, readAny)
    }

    /// Gives a packet `next` returned back, to be read into again.
    func recycle(_ packet: Packet) {
        condition.lock()
        spare.append(packet)
        condition.unlock()
    }

    /// Makes a waiting `next` return `.waiting` (from any thread: a stop).
    func wake() {
        condition.lock()
        woken = true
        condition.broadcast()
        condition.unlock()
    }

    /// Gives the device up: its thread ends after the read it is in.
    func abandon() {
        condition.lock()
        abandoned = true
        ready.removeAll()
        spare.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
