import XCTest
import FFmpeg
@testable import LiveMux

/// `RecordingReport`'s interleaving rules on packets given by hand, in the time bases of an
/// ordinary MP4 from ffmpeg: video 1/15360, audio 1/48000.
final class RecordingReportTests: XCTestCase {
    let videoBase = Rational(1, 15360), audioBase = Rational(1, 48000)

    /// A report over `packets` (stream 0 video, stream 1 audio) in the order given, analysed.
    func analysed(_ packets: [(stream: Int, dts: Int64)]) -> RecordingReport {
        let records = packets.enumerated().map { n, p in
            RecordingReport.PacketRecord(stream: p.stream, timestamp: p.dts, timeBase: p.stream == 0 ? videoBase : audioBase,
                                         size: 100, isKeyframe: n == 0, position: Int64(n * 100))
        }
        let streams = [RecordingReport.Stream(index: 0, kind: .video, codec: "h264", width: 320, height: 240, sampleRate: 0, channels: 0),
                       RecordingReport.Stream(index: 1, kind: .audio, codec: "aac", width: 0, height: 0, sampleRate: 48000, channels: 2)]
        var report = RecordingReport(path: "test.mp4", formatName: "mp4", fileSize: 1000, streams: streams, packets: records)
        report.analyseInterleaving()
        return report
    }

    /// 1.6 s is 24576/15360 and 76800/48000; as doubles, 76800 · (1/48000) is 1.5999999999999999
    /// and 24576 · (1/15360) is 1.6: a floating-point comparison called this an inversion.
    func testEqualTimesInTwoTimeBasesAreNoInversion() {
        let report = analysed([(0, 24064), (1, 75776), (0, 24576), (1, 76800), (0, 25088)])
        XCTAssertEqual(report.inversions.count, 0)
        XCTAssertEqual(report.backwardsInStream, 0)
        XCTAssertTrue(report.isWellInterleaved)
        XCTAssertTrue(report.text.contains("interleaving: good"), report.text)
    }

    /// One audio tick (1/48000 s) before the video already read is an inversion: the rule is exact.
    func testOneTickBeforeTheOtherStreamIsAnInversion() {
        let report = analysed([(0, 24064), (1, 75776), (0, 24576), (1, 76799), (0, 25088)])
        XCTAssertEqual(report.inversions.count, 1)
        XCTAssertEqual(report.inversions.first?.packet, 3)
        XCTAssertFalse(report.isWellInterleaved)
    }

    /// Within a stream, an equal DTS is not going backwards; a lower one is.
    func testBackwardsWithinAStream() {
        XCTAssertEqual(analysed([(0, 512), (0, 512), (1, 1600)]).backwardsInStream, 0)
        XCTAssertEqual(analysed([(0, 1024), (0, 512), (1, 1600)]).backwardsInStream, 1)
    }
}
