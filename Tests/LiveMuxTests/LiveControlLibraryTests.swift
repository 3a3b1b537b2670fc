import Foundation
import XCTest
import LiveMux

/// docs/library.md's "Changing a recording while it runs": the job object's own control calls,
/// the same the control API makes (only the public API).
final class LiveControlLibraryTests: XCTestCase {
    func config(_ path: String, live: Bool) -> RecordConfiguration {
        var config = RecordConfiguration()
        config.video.width = 320
        config.video.height = 240
        config.audioSources = [SourceSpec(format: "lavfi", url: "sine=frequency=440"), SourceSpec(format: "lavfi", url: "sine=frequency=1000")]
        config.duration = 3
        config.liveControl = live
        var own = OutputEncoding()
        own.videoBitRate = 400_000
        config.outputs.destinations = [OutputSpec(destination: .file(path), format: .flv),
                                       OutputSpec(destination: .file(path + ".2.flv"), format: .flv, encoding: own)]
        return config
    }

    func testAMuteAVolumeAndABitRateChangedFromSwift() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livemux-control-\(UUID().uuidString).flv").path
        defer { [path, path + ".2.flv", path + ".3.flv", path + ".4.flv", path + ".symbolic.flv", path + ".hard.flv"].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        let pipeline = try Pipeline(config(path, live: true))
        pipeline.start()
        XCTAssertTrue(waitUntil(deadline: 20) { pipeline.statisticsSnapshot.mediaTime >= 1 }, "a second of media")
        try pipeline.setAudio("a1", muted: true)
        try pipeline.setAudio("a0", volume: 0.5)
        try pipeline.setVideoBitRate(output: "o1", 200_000)
        let added = try pipeline.addOutput(OutputSpec(destination: .file(path + ".3.flv"), format: .flv))
        XCTAssertEqual(added.id.description, "o2")
        XCTAssertThrowsError(try pipeline.addOutput(OutputSpec(destination: .file(path), format: .flv))) {
            XCTAssertEqual(($0 as? ControlError)?.field, "output", "it is being written")
        }
        // Another name of that file is that file: a symbolic link, and a hard link (which exists,
        // so it is refused as the output it is, not as a file to overwrite).
        XCTAssertEqual(symlink(path, path + ".symbolic.flv"), 0)
        XCTAssertEqual(link(path, path + ".hard.flv"), 0)
        for other in [path + ".symbolic.flv", path + ".hard.flv"] {
            XCTAssertThrowsError(try pipeline.addOutput(OutputSpec(destination: .file(other), format: .flv))) {
                XCTAssertEqual(($0 as? ControlError)?.field, "output", "\(other) is the file being written")
            }
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: path + ".4.flv", contents: Data("someone's".utf8)))
        XCTAssertThrowsError(try pipeline.addOutput(OutputSpec(destination: .file(path + ".4.flv"), format: .flv))) {
            XCTAssertEqual(($0 as? ControlError)?.field, "overwrite", "it exists")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: path + ".4.flv"), Data("someone's".utf8), "left as it was")
        XCTAssertTrue(waitUntil(deadline: 20) { pipeline.statisticsSnapshot.mediaTime >= 2 }, "two seconds of media")
        try pipeline.removeOutput("o2")
        XCTAssertThrowsError(try pipeline.removeOutput("o9")) { XCTAssertEqual(($0 as? ControlError)?.status, "404 Not Found") }
        XCTAssertThrowsError(try pipeline.removeOutput("o2")) { XCTAssertEqual(($0 as? ControlError)?.status, "409 Conflict", "already ending") }
        XCTAssertThrowsError(try pipeline.setAudio("a2", muted: true)) { XCTAssertEqual(($0 as? ControlError)?.status, "404 Not Found") }
        let tone = try pipeline.addSource(Capabilities.sourceSpec("lavfi:sine=frequency=2000"), kind: .audio)
        XCTAssertEqual(tone.id.description, "a2")
        try pipeline.setAudio("a2", volume: 0.5)
        let picture = try pipeline.addSource(Capabilities.sourceSpec("lavfi:testsrc2=size=160x120"), kind: .video)
        XCTAssertEqual(picture.id.description, "v1")
        XCTAssertThrowsError(try pipeline.addSource(Capabilities.sourceSpec("rtmp://127.0.0.1/live/x"), kind: .video)) {
            XCTAssertEqual(($0 as? ControlError)?.field, "video", "a URL could keep the call waiting")
        }
        try pipeline.removeSource("a2")
        XCTAssertThrowsError(try pipeline.setAudio("a0", volume: -1)) { XCTAssertEqual(($0 as? ControlError)?.field, "volume") }
        XCTAssertThrowsError(try pipeline.setVideoBitRate(output: "o0", 10)) { XCTAssertEqual(($0 as? ControlError)?.field, "vbitrate") }
        XCTAssertThrowsError(try pipeline.cutSegments()) { XCTAssertEqual(($0 as? ControlError)?.status, "409 Conflict") }
        try pipeline.wait()
        let changes = pipeline.statisticsSnapshot.changes.map { "\($0.target) \($0.setting)" }
        XCTAssertEqual(changes, ["a1 mute", "a0 volume", "o1 vbitrate", "o2 added", "o2 removed", "a2 added", "a2 volume", "v1 added", "a2 removed"])
        XCTAssertEqual(pipeline.statisticsSnapshot.outputStates["o2"], .finished)
        XCTAssertEqual(pipeline.statisticsSnapshot.outputLabels["o2"], path + ".3.flv")
        XCTAssertGreaterThan(try FileManager.default.attributesOfItem(atPath: path + ".3.flv")[.size] as? Int ?? 0, 10_000)
    }

    func testAJobStartedWithoutLiveControlSaysSo() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livemux-control-\(UUID().uuidString).flv").path
        defer { [path, path + ".2.flv"].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        var c = config(path, live: false)
        c.duration = 0.5
        let pipeline = try Pipeline(c)
        pipeline.start()
        XCTAssertThrowsError(try pipeline.setAudio("a1", muted: true)) {
            XCTAssertTrue("\($0)".contains("liveControl"), "\($0)")
        }
        XCTAssertThrowsError(try pipeline.setVideoBitRate(output: "o1", 200_000)) { XCTAssertTrue("\($0)".contains("liveControl")) }
        try pipeline.wait()
    }
}
