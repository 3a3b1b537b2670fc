import FFmpeg

/// Places a live device's first audio frames by the stamps of several of them, not by the first.
///
/// Audio is stamped from its sample count, so the frame that starts the stream places every later
/// sample. A device stamps a packet with when it was read less the latency it reports, and the
/// first stamp can be late by a lot: pulse's first latency query fails when the stream's first
/// packets are read before the daemon's first timing update; libavdevice then skips its stamp for
/// that packet, whose time comes out at about its read, 60–100 ms after the burst waiting since
/// the stream started was captured. So the first `span` of samples is held, and each held frame
/// placed at the earliest origin their stamps give (a stamp less the samples before it: the lower
/// envelope) plus the samples before it. Later frames keep their own stamps, from which the drift
/// is read. Used by the capture thread only.
struct AudioStartSettling {
    /// A frame handed on, with its capture time (µs) and when it arrived.
    struct Timed {
        let frame: Frame
        let time: Int64
        let arrival: Int64
    }

    /// How many µs of samples are held: after a first stamp 60–100 ms late, pulse's time filter
    /// comes within ~10 ms of its settled stamps in ten 20 ms packets; it then swings a little
    /// early and comes back over seconds, so a longer hold would follow it down (docs/devices.md).
    static let span: Int64 = 200_000

    private var held: [Timed] = []
    /// Samples held so far.
    private var heldSamples = 0
    private(set) var isSettled = false

    /// Holds `frame` (captured at `time`, arrived at `arrival`) while the start is unsettled;
    /// returns every frame held, placed, once `span` is in, or `frame` itself once settled.
    mutating func take(_ frame: Frame, at time: Int64, arrival: Int64) throws -> [Timed] {
        if isSettled || frame.sampleRate <= 0 { return [Timed(frame: frame, time: time, arrival: arrival)] }
        held.append(Timed(frame: try frame.reference(), time: time, arrival: arrival))
        heldSamples += frame.sampleCount
        return Self.microseconds(heldSamples, frame.sampleRate) >= Self.span ? release() : []
    }

    /// Every frame held, placed on the lower envelope of their stamps; the start counts as settled.
    mutating func release() -> [Timed] {
        isSettled = true
        guard let rate = held.first?.frame.sampleRate else { return [] }
        var before = 0
        var origin = Int64.max
        var offsets: [Int64] = []
        for h in held {
            offsets.append(Self.microseconds(before, rate))
            origin = min(origin, h.time - offsets.last!)
            before += h.frame.sampleCount
        }
        let placed = zip(held, offsets).map { h, offset in Timed(frame: h.frame, time: origin + offset, arrival: h.arrival) }
        held = []
        heldSamples = 0
        return placed
    }

    /// A reopened device starts a new stream, whose first stamps are settled afresh.
    mutating func restart() {
        held = []
        heldSamples = 0
        isSettled = false
    }

    private static func microseconds(_ samples: Int, _ rate: Int) -> Int64 {
        Int64(samples) * 1_000_000 / Int64(rate)
    }
}
