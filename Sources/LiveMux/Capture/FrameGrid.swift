/// Puts a live video device's frames back on the device's own frame grid.
///
/// x11grab stamps a frame when its thread woke to grab it, which on a loaded machine is up to a
/// frame after the time it was scheduled for; placed by that stamp, a frame late by half a frame
/// lands on the next slot, which is then taken twice (one frame dropped, one slot empty). A
/// device's frames are due every `period`, and a frame is never grabbed before it is due, so the
/// grid is the lower envelope of the stamps: each stamp is moved back to the grid point at or
/// before it. The grid follows frames that come earlier at once and later slowly
/// (`followLater`), so a device a little slower than its nominal rate is followed too.
///
/// A grabber on a schedule (x11grab: frame n is due at start + n periods, and one that woke more
/// than a period late is followed by the frames it owes at once) never skips a grid point, so
/// its frames are counted instead: frame n is at the envelope + n periods. Without counting such
/// a frame would take the next point and the next frame be dropped.
struct FrameGrid {
    /// The device's nominal frame period (µs); 0 when unknown: stamps are passed through.
    let period: Double
    /// A grid point (µs on the capture clock).
    private var phase: Double?
    private var last: Int64?
    /// A frame this far before a grid point (fraction of a period) is early, not late.
    static let earlyFraction = 0.1
    /// How much of a frame's lateness moves the grid later.
    static let followLater = 1.0 / 128

    /// Whether frames are counted (a grabber on a schedule); see above.
    let counting: Bool
    private var count = 0.0

    init(framesPerSecond: Double, counting: Bool) {
        period = framesPerSecond > 0 ? 1_000_000 / framesPerSecond : 0
        self.counting = counting
    }

    /// The grid time (µs) of a frame stamped `stamp`; always later than the previous one.
    mutating func place(_ stamp: Int64) -> Int64 {
        guard period > 0 else { return stamp }
        let s = Double(stamp)
        if counting {
            phase = min(phase ?? s, s - count * period)
            let time = Int64((phase! + count * period).rounded())
            count += 1
            return follow(time)
        }
        let grid = phase ?? s
        var lateness = (s - grid).truncatingRemainder(dividingBy: period)
        if lateness < 0 { lateness += period }
        if lateness >= (1 - Self.earlyFraction) * period { lateness -= period }
        phase = grid + (lateness < 0 ? lateness : lateness * Self.followLater)
        return follow(Int64((s - lateness).rounded()))
    }

    /// A frame more than a period late may share a grid point with the next; it stays after it.
    private mutating func follow(_ grid: Int64) -> Int64 {
        var time = grid
        if let last, time <= last { time = last + 1 }
        last = time
        return time
    }
}
