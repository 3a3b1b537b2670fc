import XCTest
@testable import LiveMux

/// Segment names from the -o pattern, read as ffmpeg's segment muxer reads them.
final class SegmentNameTests: XCTestCase {
    /// 2026-12-05 03:04:05 local time, in µs since 1970.
    var instant: Int64 {
        var t = tm()
        t.tm_year = 126
        t.tm_mon = 11
        t.tm_mday = 5
        t.tm_hour = 3
        t.tm_min = 4
        t.tm_sec = 5
        t.tm_isdst = -1
        return Int64(mktime(&t)) * 1_000_000
    }

    func testNumbers() {
        XCTAssertEqual(SegmentName("rec-%d.asf").path(index: 7, wallClock: instant), "rec-7.asf")
        XCTAssertEqual(SegmentName("rec-%03d.asf").path(index: 7, wallClock: instant), "rec-007.asf")
        XCTAssertEqual(SegmentName("rec-%03d.asf").path(index: 1234, wallClock: instant), "rec-1234.asf")
        XCTAssertEqual(SegmentName("100%%-%2d.flv").path(index: 3, wallClock: instant), "100%- 3.flv")
        XCTAssertEqual(SegmentName("d%d/seg.flv").path(index: 2, wallClock: instant), "d2/seg.flv")
    }

    /// Any strftime field makes it a time pattern, where %d is the day (ffmpeg's -strftime 1).
    func testTimeFields() {
        XCTAssertEqual(SegmentName("rec-%Y%m%d-%H%M%S.asf").path(index: 9, wallClock: instant), "rec-20261205-030405.asf")
        XCTAssertEqual(SegmentName("rec-%Y%m%d-%H.asf").path(index: 9, wallClock: instant), "rec-20261205-03.asf")
        XCTAssertEqual(SegmentName("%%%H.flv").path(index: 0, wallClock: instant), "%03.flv")
    }

    func testFields() {
        XCTAssertTrue(SegmentName("a-%d.asf").hasFields)
        XCTAssertTrue(SegmentName("a-%H.asf").hasFields)
        XCTAssertFalse(SegmentName("a.asf").hasFields)
        XCTAssertFalse(SegmentName("100%%.asf").hasFields)
        XCTAssertFalse(SegmentName("trailing%").hasFields)
    }

    /// A name is the pattern's when the pattern makes exactly it: its number, else nil.
    func testNumberOfAName() {
        let padded = SegmentName("p%03d.asf")
        XCTAssertEqual(padded.number(of: "p007.asf"), 7)
        XCTAssertEqual(padded.number(of: "p1234.asf"), 1234)
        XCTAssertNil(padded.number(of: "p07.asf"), "not %03d's")
        XCTAssertNil(padded.number(of: "p007.asf.bak"))
        XCTAssertNil(padded.number(of: "q007.asf"))
        XCTAssertNil(padded.number(of: "p.asf"))
        XCTAssertEqual(SegmentName("p%d.asf").number(of: "p12.asf"), 12)
        XCTAssertNil(SegmentName("p%d.asf").number(of: "p012.asf"))
        XCTAssertEqual(SegmentName("100%%-%2d.flv").number(of: "100%- 3.flv"), 3)
        XCTAssertEqual(SegmentName("a%d-b%02d.flv").number(of: "a5-b05.flv"), 5)
        XCTAssertNil(SegmentName("a%d-b%02d.flv").number(of: "a5-b06.flv"))
        XCTAssertNil(SegmentName("rec-%H%M.asf").number(of: "rec-0304.asf"), "a dated pattern has no numbers")
        XCTAssertTrue(padded.isNumbered)
        XCTAssertFalse(SegmentName("rec-%Y%m%d.asf").isNumbered)
        XCTAssertFalse(SegmentName("rec.asf").isNumbered)
    }

    /// The name tried when a segment's own is taken: -N before the extension.
    func testAlternativeName() {
        XCTAssertEqual(SegmentName.alternative(to: "p002.asf", 1), "p002-1.asf")
        XCTAssertEqual(SegmentName.alternative(to: "/rec/d.2026/x-20261205.flv", 12), "/rec/d.2026/x-20261205-12.flv")
        XCTAssertEqual(SegmentName.alternative(to: "rec/noext", 2), "rec/noext-2")
        XCTAssertEqual(SegmentName.alternative(to: "rec/.hidden", 1), "rec/.hidden-1")
    }
}
