import XCTest
import FFmpeg
@testable import LiveMux

final class AudioStartSettlingTests: XCTestCase {
    /// 20 ms of 48 kHz audio, as pulse delivers it on the rig.
    static let packet = 960
    static let packetDuration: Int64 = 20_000

    private func frame() throws -> Frame {
        try Frame.silence(samples: Self.packet, format: .floatPlanar, sampleRate: 48000, channels: 1)
    }

    /// A burst whose first stamp is 66 ms late and whose next stamps come back over ten packets
    /// (what pulse gave when its first latency query failed): nothing comes out until 200 ms of
    /// samples are in, then every held frame sits 20 ms after the one before, from the earliest
    /// origin their stamps give, not from the first stamp.
    func testTheFirstFramesArePlacedOnTheLowerEnvelope() throws {
        var settling = AudioStartSettling()
        let truth: Int64 = 1_000_000
        let late: [Int64] = [66_000, 37_000, 27_000, 20_000, 14_000, 10_000, 6_000, 3_500, 1_700, 600, 0, 300]
        var out: [AudioStartSettling.Timed] = []
        for (n, l) in late.enumerated() {
            let stamp = truth + Int64(n) * Self.packetDuration + l
            let released = try settling.take(try frame(), at: stamp, arrival: stamp + 20_000)
            if n < 9 { XCTAssertTrue(released.isEmpty, "packet \(n) held") }
            out += released
        }
        XCTAssertTrue(settling.isSettled)
        XCTAssertEqual(out.count, late.count)
        // Held: the ten packets of the first 200 ms, from the earliest origin (the tenth's, 600 µs late);
        // then the packets pass with their own stamps.
        let held = (0..<10).map { truth + 600 + Int64($0) * Self.packetDuration }
        XCTAssertEqual(out.map(\.time), held + [truth + 10 * Self.packetDuration, truth + 11 * Self.packetDuration + 300])
    }

    /// An input that ends before 200 ms of samples gets what it held back, placed; a reopened
    /// device is held afresh.
    func testReleaseAndRestart() throws {
        var settling = AudioStartSettling()
        XCTAssertTrue(try settling.take(try frame(), at: 5_000, arrival: 5_000).isEmpty)
        XCTAssertTrue(try settling.take(try frame(), at: 20_000, arrival: 25_000).isEmpty)
        XCTAssertEqual(settling.release().map(\.time), [0, 20_000])
        XCTAssertEqual(try settling.take(try frame(), at: 90_000, arrival: 90_000).map(\.time), [90_000], "settled: passed on")
        settling.restart()
        XCTAssertTrue(try settling.take(try frame(), at: 100_000, arrival: 100_000).isEmpty)
        XCTAssertEqual(settling.release().map(\.time), [100_000])
    }
}
