import XCTest
import FFmpeg
@testable import LiveMux

/// `RecordingReport`'s interleaving rules on packets given by hand, in the time bases of an
/// ordinary MP4 from ffmpeg: video 1/15360, audio 1/48000.
final class RecordingReportTests: XCTestCase {
    let videoBase = Rational(1, 15360), audioBase = Rational(1, 48000)

    /// A report over `packets` (stream 0 video, stream 1 audio) in the order given, analysed.
    /// Packets listed in `placedByPTS` (by their place in `packets`) came with no DTS.
    func analysed(_ packets: [(stream: Int, dts: Int64)], placedByPTS: Set<Int> = []) -> RecordingReport {
        let records = packets.enumerated().map { n, p in
            RecordingReport.PacketRecord(stream: p.stream, timestamp: p.dts, timeBase: p.stream == 0 ? videoBase : audioBase,
                                         size: 100, isKeyframe: n == 0, position: Int64(n * 100), timestampIsDTS: !placedByPTS.contains(n))
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

    /// B-frames: the first two video packets came without DTS and are placed by their PTS, later
    /// than their decoding. Judged by the DTS there is, nothing is inverted or goes backwards, and
    /// the frame rate is the DTS steps' (25 fps: 614.4 ticks of 1/15360), not stretched by them.
    func testPacketsPlacedByTheirPTSAreLeftOutOfTheJudgement() {
        let frame: Int64 = 614  // 1/25 s in 1/15360, rounded as a muxer would
        // Audio at 0, 40, 80 and 160 ms (1/48000), each after the video before it.
        let report = analysed([(0, 3 * frame), (0, 6 * frame), (1, 0), (0, frame), (1, 1920), (0, 2 * frame), (1, 3840),
                               (0, 3 * frame), (0, 4 * frame), (1, 7680), (0, 5 * frame), (0, 6 * frame)],
                              placedByPTS: [0, 1])
        XCTAssertEqual(report.inversions.count, 0)
        XCTAssertEqual(report.backwardsInStream, 0)
        XCTAssertTrue(report.isWellInterleaved, report.text)
        XCTAssertEqual(report.packetInterval(of: report.streams[0]) ?? 0, Double(frame) / 15360, accuracy: 1e-9)
        // Placed by their PTS, the same packets were an inversion and a step back.
        let asBefore = analysed([(0, 3 * frame), (0, 6 * frame), (1, 0), (0, frame), (1, 1920), (0, 2 * frame)])
        XCTAssertFalse(asBefore.isWellInterleaved)
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
