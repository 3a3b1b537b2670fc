import XCTest
import FFmpeg
@testable import LiveMux

final class InterleaverTests: XCTestCase {
    let videoBase = Rational(1, 30)
    let audioBase = Rational(1, 48000)

    func packet(_ stream: StreamKind, _ dts: Int64) -> EncodedPacket {
        let p = Packet()
        p.dts = dts
        p.pts = dts
        return EncodedPacket(stream: stream, packet: p, timeBase: stream == .video ? videoBase : audioBase)
    }

    func order(_ i: inout Interleaver) -> [String] {
        var out: [String] = []
        while let p = i.next() { out.append("\(p.stream == .video ? "v" : "a")\(p.dts)") }
        return out
    }

    func testLowerTimestampFirstAcrossTimeBases() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 0))    // 0 ms
        i.push(packet(.video, 1))    // 33.3 ms
        i.push(packet(.audio, 1024)) // 21.3 ms
        i.push(packet(.audio, 2048)) // 42.7 ms
        XCTAssertEqual(order(&i), ["v0", "a1024", "v1"], "then waits: audio 2048 may not be next before video 2 arrives")
    }

    func testWaitsForTheOtherStream() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 0))
        XCTAssertNil(i.next(), "audio has not ended and could still come first")
        i.push(packet(.audio, 0))
        XCTAssertNotNil(i.next())
    }

    func testEndOfOneStreamReleasesTheOther() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 0))
        i.push(packet(.video, 1))
        i.end(.audio)
        XCTAssertEqual(order(&i), ["v0", "v1"])
        XCTAssertFalse(i.isFinished)
        i.end(.video)
        XCTAssertTrue(i.isFinished)
    }

    func testEqualTimestampsGoVideoFirst() {
        var i = Interleaver(streams: [.audio, .video])
        i.push(packet(.audio, 48000))  // 1 s
        i.push(packet(.video, 30))     // 1 s
        i.end(.audio); i.end(.video)
        XCTAssertEqual(order(&i), ["v30", "a48000"])
    }

    func testDifferentTimeBasesCompareExactly() {
        // 1/3 s in 1/30 is 10; 16000 in 1/48000 is 1/3 s; 16001 is just after.
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.audio, 16001))
        i.push(packet(.video, 10))
        i.end(.video); i.end(.audio)
        XCTAssertEqual(order(&i), ["v10", "a16001"])
    }

    func testForceDecidesAmongQueued() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 5))
        XCTAssertNil(i.next())
        XCTAssertEqual(i.next(force: true)?.dts, 5)
    }

    func testManyPacketsStayOrdered() {
        var i = Interleaver(streams: [.video, .audio])
        for n in 0..<300 { i.push(packet(.video, Int64(n))) }
        for n in 0..<470 { i.push(packet(.audio, Int64(n * 1024))) }
        i.end(.video); i.end(.audio)
        var last: EncodedPacket? = nil
        var count = 0
        while let p = i.next() {
            if let l = last { XCTAssertGreaterThanOrEqual(Timestamp.compare(p.dts, p.timeBase, l.dts, l.timeBase), 0) }
            last = p
            count += 1
        }
        XCTAssertEqual(count, 770)
    }
}
