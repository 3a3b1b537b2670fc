import XCTest
@testable import LiveMux

final class PresentationOrderTests: XCTestCase {
    /// Feeds pictures in decoding order (POC, keyframe) and takes every item as it comes out:
    /// (item, decoding index, place in presentation order), checking the invariants on the way.
    func run(_ pictures: [(order: Int, key: Bool)], depth: Int, file: StaticString = #filePath, line: UInt = #line)
        -> [(item: Int, decoded: Int64, shown: Int64)] {
        var p = PresentationOrder<Int>(depth: depth)
        var out: [(item: Int, decoded: Int64, shown: Int64)] = []
        var mostHeld = 0
        for (i, picture) in pictures.enumerated() {
            p.add(i, order: picture.order, isKeyframe: picture.key)
            mostHeld = max(mostHeld, i + 1 - out.count)
            while let next = p.next() { out.append(next) }
        }
        p.finish()
        while let next = p.next() { out.append(next) }
        XCTAssertEqual(out.map(\.item), Array(pictures.indices), "every item once, in decoding order", file: file, line: line)
        XCTAssertEqual(out.map(\.decoded), (0..<Int64(pictures.count)).map { $0 }, file: file, line: line)
        XCTAssertEqual(Set(out.map(\.shown)).count, pictures.count, "no two pictures share a place", file: file, line: line)
        for o in out {
            XCTAssertGreaterThanOrEqual(o.shown + Int64(p.depth), o.decoded, "PTS before DTS: \(o)", file: file, line: line)
        }
        XCTAssertLessThanOrEqual(mostHeld, PresentationOrder<Int>.maximumHeld + 1, "held stays bounded", file: file, line: line)
        return out
    }

    /// x264's default GOP (3 B-frames, pyramid, POC steps of 2) in decoding order: I0 P8 B4 b2 b6 …,
    /// two IDR sequences whose POC starts again at 0.
    func x264Sequence(frames: Int) -> [(order: Int, key: Bool)] {
        var pictures: [(order: Int, key: Bool)] = [(0, true)]
        var next = 1
        while next < frames {
            let reference = min(next + 3, frames - 1)
            pictures.append((2 * reference, false))
            let bs = Array(next..<reference)
            let pyramid = bs.count == 3 ? [bs[1], bs[0], bs[2]] : bs
            pictures += pyramid.map { (2 * $0, false) }
            next = reference + 1
        }
        return pictures
    }

    func testPyramidGOPsAreShownInPictureOrder() {
        let first = x264Sequence(frames: 30), second = x264Sequence(frames: 20)
        let out = run(first + second, depth: 2)
        // Within each sequence the place follows the POC; the second sequence is shown after the first.
        let places = out.map(\.shown)
        XCTAssertEqual(Array(places.prefix(30)), first.map { Int64($0.order / 2) })
        XCTAssertEqual(Array(places.dropFirst(30)), second.map { Int64(30 + $0.order / 2) })
    }

    func testNoReorderingIsDecodingOrder() {
        let pictures = (0..<40).map { (order: 2 * ($0 % 10), key: $0 % 10 == 0) }
        XCTAssertEqual(run(pictures, depth: 0).map(\.shown), (0..<40).map { Int64($0) })
        XCTAssertEqual(run(pictures, depth: 2).map(\.shown), (0..<40).map { Int64($0) })
    }

    /// HEVC's open GOP: a CRA keyframe continues the POC, and the leading pictures after it in
    /// decoding order are shown before it.
    func testOpenGOPKeyframeDoesNotStartANewSequence() {
        let pictures: [(order: Int, key: Bool)] = [(0, true), (4, false), (2, false), (1, false), (3, false),
                                                   (8, true), (6, false), (5, false), (7, false)]
        XCTAssertEqual(run(pictures, depth: 2).map(\.shown), [0, 4, 2, 1, 3, 8, 6, 5, 7])
    }

    /// More reordering than the stream declared, or a POC reset the parser cannot see: every
    /// picture is still kept, each with a place of its own.
    func testTooLittleDepthKeepsEveryPicture() {
        let pictures = x264Sequence(frames: 30)
        let out = run(pictures, depth: 0)
        XCTAssertEqual(out.map(\.shown), (0..<30).map { Int64($0) })
    }

    /// A picture whose POC keeps it waiting holds back the rest only up to a bound.
    func testHeldItemsStayBounded() {
        let pictures = [(order: 100_000, key: true)] + (1..<300).map { (order: $0, key: false) }
        _ = run(pictures, depth: 2)
    }
}
