/// Puts a live video device's frames back on the device's own frame grid.
///
/// x11grab stamps a frame when its thread woke to grab it, which on a loaded machine is up to a
/// frame after the time it was scheduled for; placed by that stamp, a frame late by half a frame
/// lands on the next slot, which is then taken twice (one frame dropped, one slot empty). A
/// device's frames are due every `period`, and a frame is never grabbed before it is due, so the
/// grid is the lower envelope of the stamps: each stamp is moved back to the grid point at or
/// before it. The grid follows frames that come earlier at once and later slowly
/// (`followLater`), so a device a little slower than its nominal rate is followed too.
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

    init(framesPerSecond: Double) {
        period = framesPerSecond > 0 ? 1_000_000 / framesPerSecond : 0
    }

    /// The grid time (µs) of a frame stamped `stamp`; always later than the previous one.
    mutating func place(_ stamp: Int64) -> Int64 {
        guard period > 0 else { return stamp }
        let s = Double(stamp)
        let grid = phase ?? s
        var lateness = (s - grid).truncatingRemainder(dividingBy: period)
        if lateness < 0 { lateness += period }
        if lateness >= (1 - Self.earlyFraction) * period { lateness -= period }
        phase = grid + (lateness < 0 ? lateness : lateness * Self.followLater)
        var time = Int64((s - lateness).rounded())
        // A frame more than a period late shares a grid point with the next; it stays after it.
        if let last, time <= last { time = last + 1 }
        last = time
        return time
    }
}
