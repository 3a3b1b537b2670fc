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
}
