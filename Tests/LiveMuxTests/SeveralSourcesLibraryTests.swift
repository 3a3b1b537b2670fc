import Foundation
import XCTest
import LiveMux

/// docs/library.md's "Recording from several sources", with test sources in place of the
/// microphone and the desktop's monitor: only the public API.
final class SeveralSourcesLibraryTests: XCTestCase {
    func testMicrophoneAndDesktopAudioMixedFromSwift() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livemux-mix-\(UUID().uuidString).flv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var config = RecordConfiguration()
        config.recordVideo = false
        config.audioSources = [
            SourceSpec(format: "lavfi", url: "sine=frequency=440"),   // stands for SourceSpec(format: "pulse", url: "default")
            SourceSpec(format: "lavfi", url: "sine=frequency=1000"),  // stands for pulse's "@DEFAULT_MONITOR@"
        ]
        config.composition.gains[1] = 0.5  // the desktop at half its level under the voice
        config.realtime = false
        config.duration = 2
        config.outputs.destinations = [OutputSpec(destination: .file(path), format: .flv)]
        let pipeline = try Pipeline(config)
        pipeline.start()
        try pipeline.wait()
        let sources = pipeline.statisticsSnapshot.sources
        XCTAssertEqual(sources.map(\.label), ["a0", "a1"])
        XCTAssertEqual(sources.map(\.state), [.ended, .ended])
        XCTAssertEqual(try XCTUnwrap(sources[0].peakDBFS), -18.1, accuracy: 0.5)
        XCTAssertGreaterThan(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0, 20_000)
    }
}
