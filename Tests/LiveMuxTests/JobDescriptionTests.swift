import XCTest
@testable import LiveMux

/// The control API's typed answers and events speak the JSON they spoke as dictionaries
/// (issue 49, item 4): each is compared with an example saved from the API before the change,
/// with one field added since (an output's `vbitrate_settable`, issue 52, item 8).
final class JobDescriptionTests: XCTestCase {
    /// `GET /api` of a job with a picture and two sounds (one not heard yet), a file and a push
    /// of its own encode, and an audio-only output.
    func testTheJobsDescriptionIsTheSavedExample() throws {
        var settings = JobDescription.Output.Settings(vcodec: "h264", size: "1280x720", fps: "30", vbitrate: 2_000_000, adapts: false, abitrate: 128_000)
        var file = JobDescription.Output(id: OutputID(0), target: "a.flv", format: .flv, state: .finished, bytes: 123_456, settings: settings)
        file.vbitrateSettable = true
        settings.adapts = true
        let push = JobDescription.Output(id: OutputID(1), target: "rtmp://h/live/****", format: .flv, state: .failed("refused"), bytes: 0, settings: settings)
        let sound = JobDescription.Output(id: OutputID(2), target: "b.asf", format: .asf, state: .writing, bytes: 7,
                                          settings: .init(abitrate: 64_000))
        var a0 = JobDescription.Source(id: SourceID(.audio, 0), name: "lavfi:sine", state: .live)
        (a0.volume, a0.mute, a0.peakDBFS) = (0.25, false, -18.5)
        var a1 = JobDescription.Source(id: SourceID(.audio, 1), name: "pulse:default", state: .live)
        (a1.volume, a1.mute) = (1, true)
        let job = JobDescription(sources: [JobDescription.Source(id: SourceID(.video, 0), name: "lavfi:testsrc2", state: .live), a0, a1],
                                 outputs: [file, push, sound], layout: .init(layout: .pip, main: SourceID(.video, 0)),
                                 mediaTime: 2.04, placedTime: 2.08, segments: false)
        let saved = """
        {"layout":{"layout":"pip","main":"v0"},"media_time_s":2.04,"outputs":[\
        {"bytes":123456,"format":"flv","id":"o0","settings":{"abitrate":128000,"adapts":false,"fps":"30","size":"1280x720","vbitrate":2000000,"vcodec":"h264"},"state":"finished","target":"a.flv","vbitrate_settable":true},\
        {"bytes":0,"format":"flv","id":"o1","settings":{"abitrate":128000,"adapts":true,"fps":"30","size":"1280x720","vbitrate":2000000,"vcodec":"h264"},"state":"failed: refused","target":"rtmp:\\/\\/h\\/live\\/****","vbitrate_settable":false},\
        {"bytes":7,"format":"asf","id":"o2","settings":{"abitrate":64000},"state":"writing","target":"b.asf","vbitrate_settable":false}],\
        "placed_time_s":2.08,"segments":false,"sources":[\
        {"id":"v0","kind":"video","name":"lavfi:testsrc2","state":"live"},\
        {"id":"a0","kind":"audio","mute":false,"name":"lavfi:sine","peak_dbfs":-18.5,"state":"live","volume":0.25},\
        {"id":"a1","kind":"audio","mute":true,"name":"pulse:default","peak_dbfs":null,"state":"live","volume":1}]}
        """
        try assertSameJSON(ControlAPI.encoded(job), saved)
        XCTAssertFalse(String(decoding: ControlAPI.encoded(job), as: UTF8.self).contains(#"\/"#), "slashes as they are: rtmp://")
    }

    /// Every change, as `changes` in `--stats`, `/stats` and `/events` wrote it.
    func testEveryEventIsTheSavedChange() throws {
        let events: [JobEvent] = [.sourceAdded(SourceID(.audio, 2), name: "lavfi:sine"), .sourceRemoved(SourceID(.video, 1)),
                                  .volume(SourceID(.audio, 0), 0.5), .mute(SourceID(.audio, 1), true), .outputAdded(OutputID(2)),
                                  .outputRemoved(OutputID(2)), .videoBitRate(OutputID(1), 600_000), .reconnect(OutputID(1)), .segmentsCut,
                                  .layout(.sideBySide), .mainPicture(SourceID(.video, 1))]
        let changes = events.map { JobChange(elapsed: 1.5, event: $0) }
        let saved = """
        [{"elapsed_s":1.5,"setting":"added","target":"a2","value":"lavfi:sine"},{"elapsed_s":1.5,"setting":"removed","target":"v1"},\
        {"elapsed_s":1.5,"setting":"volume","target":"a0","value":0.5},{"elapsed_s":1.5,"setting":"mute","target":"a1","value":true},\
        {"elapsed_s":1.5,"setting":"added","target":"o2"},{"elapsed_s":1.5,"setting":"removed","target":"o2"},\
        {"elapsed_s":1.5,"setting":"vbitrate","target":"o1","value":600000},{"elapsed_s":1.5,"setting":"reconnect","target":"o1"},\
        {"elapsed_s":1.5,"setting":"cut","target":"segments"},{"elapsed_s":1.5,"setting":"layout","target":"layout","value":"side-by-side"},\
        {"elapsed_s":1.5,"setting":"main","target":"layout","value":"v1"}]
        """
        let written = try JSONSerialization.data(withJSONObject: StatisticsSnapshot.changeObjects(changes))
        try assertSameJSON(written, saved)
    }

    /// Ids are read one way: `v1`, `a0`, `o3`, and nothing else.
    func testIdsAreReadOneWay() {
        XCTAssertEqual(SourceID("v1"), SourceID(.video, 1))
        XCTAssertEqual(SourceID("a0"), SourceID(.audio, 0))
        for text in ["", "v", "a01", "x1", "a-1", "v 1", "A0", "a1x"] { XCTAssertNil(SourceID(text), text) }
        XCTAssertEqual(OutputID("o3"), OutputID(3))
        for text in ["", "o", "o03", "p1", "o-1", "o1 "] { XCTAssertNil(OutputID(text), text) }
    }

    private func assertSameJSON(_ data: Data, _ saved: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let got = try JSONSerialization.jsonObject(with: data) as? NSObject
        let want = try JSONSerialization.jsonObject(with: Data(saved.utf8)) as? NSObject
        XCTAssertEqual(got, want, String(decoding: data, as: UTF8.self), file: file, line: line)
    }
}
