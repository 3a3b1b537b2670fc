import XCTest
@testable import LiveMux

final class DecodingTimestampsTests: XCTestCase {
    /// Decoding order of presentation slots for GOPs of `pattern` (e.g. "IPBB": each reference
    /// frame is decoded before the B-frames shown before it); `pyramid` puts the middle B first.
    func decodingOrder(frames: Int, bFrames: Int, pyramid: Bool) -> [Int64] {
        var order: [Int64] = [0]
        var next = 1
        while next < frames {
            let reference = min(next + bFrames, frames - 1)
            order.append(Int64(reference))
            var bs = Array(next..<reference).map(Int64.init)
            if pyramid, bs.count >= 3 {
                let middle = bs.remove(at: bs.count / 2)
                bs.insert(middle, at: 0)
            }
            order += bs
            next = reference + 1
        }
        return order
    }

    func derive(_ pts: [Int64], knownDepth: Int = 0) -> (DecodingTimestamps, [Int64]) {
        var d = DecodingTimestamps(leading: Array(pts.prefix(DecodingTimestamps.lookahead)), knownDepth: knownDepth)
        let depth = d
        return (depth, pts.map { d.next(pts: $0) })
    }

    func checkValid(_ pts: [Int64], _ dts: [Int64], file: StaticString = #filePath, line: UInt = #line) {
        for i in pts.indices {
            XCTAssertLessThanOrEqual(dts[i], pts[i], "packet \(i): DTS after PTS", file: file, line: line)
            if i > 0 { XCTAssertGreaterThan(dts[i], dts[i - 1], "packet \(i): DTS not increasing", file: file, line: line) }
        }
    }

    func testNoReorderingKeepsPTS() {
        let pts = (0..<50).map { Int64($0) * 512 }
        let (d, dts) = derive(pts)
        XCTAssertEqual(d.depth, 0)
        XCTAssertEqual(dts, pts)
    }

    func testPyramidOfThreeBFrames() {
        // x264's default: 3 B-frames with a B reference in the middle (I0 P4 B2 b1 b3 …).
        let pts = decodingOrder(frames: 90, bFrames: 3, pyramid: true).map { $0 * 1000 + 21 }
        let (d, dts) = derive(pts)
        XCTAssertEqual(d.depth, 2)
        XCTAssertEqual(Array(dts.prefix(4)), [21 - 2000, 21 - 1000, 21, 1021])
        checkValid(pts, dts)
    }

    func testEveryPatternGivesValidTimestamps() {
        for b in 0...7 {
            for pyramid in [false, true] {
                let pts = decodingOrder(frames: 200, bFrames: b, pyramid: pyramid).map { $0 * 40 }
                checkValid(pts, derive(pts).1)
            }
        }
    }

    func testKnownDepthIsKept() {
        let pts = decodingOrder(frames: 30, bFrames: 1, pyramid: false)
        let (d, dts) = derive(pts, knownDepth: 3)
        XCTAssertEqual(d.depth, 3)
        XCTAssertEqual(dts.first, -3)
        checkValid(pts, dts)
    }
}
