import XCTest
@testable import LiveMux

/// Which encodes a recording runs and which outputs each feeds (`EncodePlan`), without an
/// encoder, a thread or a file.
final class EncodePlanTests: XCTestCase {
    typealias Session = EncodePlan.Session

    func encoding(vbitrate: Int? = nil, size: (Int, Int)? = nil, fps: Int? = nil, codec: VideoCodec? = nil,
                  abitrate: Int? = nil) -> OutputEncoding {
        var e = OutputEncoding()
        e.videoBitRate = vbitrate
        (e.width, e.height) = (size?.0, size?.1)
        e.fps = fps.flatMap { FrameRate($0) }
        e.videoCodec = codec
        e.audioBitRate = abitrate
        return e
    }

    func outputs(_ specs: [(Destination, OutputEncoding)], listen: Bool = false) -> Outputs {
        var o = Outputs()
        o.destinations = specs.map { OutputSpec(destination: $0.0, format: .flv, encoding: $0.1) }
        o.listen = listen ? ListenAddress(port: 0) : nil
        return o
    }

    func testOutputsThatAskTheSameShareOneEncodeAndOneSession() {
        let plan = EncodePlan(video: VideoSettings(), audio: AudioSettings(), outputs: outputs([
            (.file("a.flv"), OutputEncoding()), (.file("b.flv"), encoding(vbitrate: 800_000)),
            (.standardOutput, OutputEncoding()), (.file("c.flv"), encoding(vbitrate: 800_000)),
        ]), adaptive: false)
        XCTAssertEqual(plan.videoEncodes.map(\.settings.bitRate), [2_000_000, 800_000])
        XCTAssertEqual(plan.audioEncodes.count, 1)
        XCTAssertEqual(plan.sessions, [Session(video: 0, audio: 0, destinations: [0, 2]),
                                       Session(video: 1, audio: 0, destinations: [1, 3])])
    }

    func testAnOutputThatAsksOnlyAnotherAudioBitRateSharesTheVideoEncode() {
        let plan = EncodePlan(video: VideoSettings(), audio: AudioSettings(), outputs: outputs([
            (.file("a.flv"), OutputEncoding()), (.file("b.flv"), encoding(abitrate: 64_000)),
        ]), adaptive: false)
        XCTAssertEqual(plan.videoEncodes.count, 1)
        XCTAssertEqual(plan.audioEncodes.map(\.bitRate), [128_000, 64_000])
        XCTAssertEqual(plan.sessions, [Session(video: 0, audio: 0, destinations: [0]), Session(video: 0, audio: 1, destinations: [1])])
    }

    func testEachSizeRateAndCodecIsAnEncodeOfItsOwn() {
        let plan = EncodePlan(video: VideoSettings(), audio: nil, outputs: outputs([
            (.file("a.flv"), encoding(size: (640, 360))), (.file("b.flv"), encoding(fps: 15)),
            (.file("c.flv"), encoding(codec: .hevc)), (.file("d.flv"), encoding(size: (640, 360))),
        ]), adaptive: false)
        XCTAssertEqual(plan.videoEncodes.count, 3)
        XCTAssertEqual(plan.videoEncodes[0].settings.width, 640)
        XCTAssertEqual(plan.videoEncodes[1].settings.fps, FrameRate(15))
        XCTAssertEqual(plan.videoEncodes[2].settings.codec, .hevc)
        XCTAssertEqual(plan.sessions.map(\.destinations), [[0, 3], [1], [2]])
        XCTAssertEqual(plan.sessions.map(\.audio), [nil, nil, nil])
    }

    /// The first URL output's encode follows its link; URL outputs that ask the same ride on it,
    /// local outputs that ask the same get an encode of their own, and come first (they measure).
    func testTheAdaptingPushHasAnEncodeApartFromTheLocalOutputs() {
        let given = outputs([(.network("rtmp://h/app/a"), OutputEncoding()), (.file("a.flv"), OutputEncoding()),
                             (.network("rtmp://h/app/b"), OutputEncoding()), (.network("rtmp://h/app/c"), encoding(vbitrate: 500_000))],
                            listen: true)
        let plan = EncodePlan(video: VideoSettings(), audio: AudioSettings(), outputs: given, adaptive: true)
        XCTAssertEqual(plan.videoEncodes.map(\.adapts), [true, false, false])
        XCTAssertEqual(plan.sessions, [Session(video: 1, audio: 0, destinations: [1], viewers: true),
                                       Session(video: 2, audio: 0, destinations: [3]),
                                       Session(video: 0, audio: 0, destinations: [0, 2])])
        var shared = VideoSettings()
        shared.sharedEncode = true
        let one = EncodePlan(video: shared, audio: AudioSettings(), outputs: given, adaptive: true)
        XCTAssertEqual(one.videoEncodes.map(\.adapts), [true, false])
        XCTAssertEqual(one.sessions, [Session(video: 1, audio: 0, destinations: [3]),
                                      Session(video: 0, audio: 0, destinations: [0, 1, 2], viewers: true)])
    }

    func testWithoutAnAdaptingPushEveryOutputAtTheSameSettingsIsOneSession() {
        let plan = EncodePlan(video: VideoSettings(), audio: AudioSettings(), outputs: outputs([
            (.network("rtmp://h/app/a"), OutputEncoding()), (.file("a.flv"), OutputEncoding()),
        ], listen: true), adaptive: false)
        XCTAssertEqual(plan.sessions, [Session(video: 0, audio: 0, destinations: [0, 1], viewers: true)])
    }

    func testViewersTakeTheRecordingsSettings() {
        let plan = EncodePlan(video: VideoSettings(), audio: AudioSettings(), outputs: outputs([
            (.file("a.flv"), encoding(vbitrate: 500_000)),
        ], listen: true), adaptive: false)
        XCTAssertEqual(plan.sessions, [Session(video: 0, audio: 0, destinations: [0]), Session(video: 1, audio: 0, viewers: true)])
        XCTAssertEqual(plan.videoEncodes.map(\.settings.bitRate), [500_000, 2_000_000])
    }

    func testSettingsEveryOutputAsksBecomeTheRecordingsWhenNoViewerTakesTheRecordings() {
        var c = RecordConfiguration()
        c.outputs = outputs([(.file("a.flv"), encoding(vbitrate: 500_000, size: (320, 240))),
                             (.file("b.flv"), encoding(vbitrate: 500_000, size: (320, 240)))])
        let promoted = EncodePlan.promotingCommonEncoding(c)
        XCTAssertEqual(promoted.video.bitRate, 500_000)
        XCTAssertEqual(promoted.video.width, 320)
        XCTAssertTrue(promoted.outputs.destinations.allSatisfy(\.encoding.isEmpty))
        c.outputs.listen = ListenAddress(port: 0)
        XCTAssertEqual(EncodePlan.promotingCommonEncoding(c).video.bitRate, 2_000_000, "viewers take the recording's")
        c.outputs.servesViewers = false  // --http: the dashboard alone
        XCTAssertEqual(EncodePlan.promotingCommonEncoding(c).video.bitRate, 500_000)
        c.outputs.destinations[1].encoding = OutputEncoding()
        XCTAssertEqual(EncodePlan.promotingCommonEncoding(c).video.bitRate, 2_000_000, "the outputs differ")
    }
}
