import XCTest
@testable import LiveMux

final class FrameGridTests: XCTestCase {
    let period = 1_000_000.0 / 30

    /// A grabber on a schedule: frame n due at n periods, woken up to 10 ms late, and once 45 ms
    /// late (more than a period), after which the frame it owes comes at once. Every frame lands
    /// on its own grid point, the first frame's lateness included.
    func testAScheduledGrabberLandsOnItsGrid() {
        var grid = FrameGrid(framesPerSecond: 30, counting: true)
        let lateness: [Double] = [8_000, 0, 3_000, 10_000, 45_000, 12_000, 1_000, 0, 6_000]
        let times = lateness.enumerated().map { n, late in grid.place(Int64(Double(n) * period + late)) }
        let slots = times.map { (Double($0) / period).rounded() }
        XCTAssertEqual(slots, (0..<lateness.count).map(Double.init), "times \(times)")
    }

    /// A device that stamps its frames itself (v4l2) is placed on the lower envelope of its
    /// stamps: jitter up to 20 ms late never moves a frame to the next slot, and a device
    /// 0.1% slower than nominal is followed.
    func testJitterAndASlowDeviceStayOnTheirSlots() {
        var grid = FrameGrid(framesPerSecond: 30, counting: false)
        var slots: [Double] = []
        for n in 0..<3000 {
            let late = Double((n * 7919) % 21) * 1000  // 0–20 ms, scattered
            let t = grid.place(Int64(Double(n) * period * 1.001 + late))
            slots.append((Double(t) / (period * 1.001)).rounded())
        }
        XCTAssertEqual(slots, (0..<3000).map(Double.init))
    }
}
