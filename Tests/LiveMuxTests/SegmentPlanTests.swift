import XCTest
import POSIX
@testable import LiveMux

/// The library's segments: a `Pipeline` whose outputs carry a `SegmentPlan`, cut on demand with
/// `requestCut()` (what SIGUSR1 does in the CLI), each closed segment told to `onClosed`.
final class SegmentPlanTests: XCTestCase {
    func testRequestCutClosesTheSegmentAtAForcedKeyframe() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("livemux-plan-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let closed = Locked<[SegmentRecord]>([])
        var policy = SegmentPolicy()
        policy.duration = 1000  // never by time: only the request cuts
        let plan = SegmentPlan(policy) { record in closed.withLock { $0.append(record) } }
        var config = RecordConfiguration()
        // At real time: unpaced, the encoder runs a queue's length ahead of the mux thread and
        // could be done before the request, leaving no frame to force.
        config.duration = 3
        config.video.width = 160
        config.video.height = 120
        config.video.gopSeconds = 10
        config.outputs.destinations = [OutputSpec(destination: .file("\(dir)/lib-%d.flv"), format: .flv)]
        config.outputs.segments = plan
        let pipeline = try Pipeline(config, quiet: true)
        pipeline.start()
        // Asked for once a second of media is muxed: with a 10 s GOP only a forced keyframe cuts before the end.
        XCTAssertTrue(waitUntil(deadline: 20) { pipeline.statisticsSnapshot.mediaTime >= 1 }, "a second of media")
        plan.requestCut()
        try pipeline.wait()
        let records = closed.withLock { $0 }
        XCTAssertEqual(records.map(\.path), ["\(dir)/lib-0.flv", "\(dir)/lib-1.flv"])
        XCTAssertEqual(records.first?.start, 0)
        XCTAssertGreaterThan(records.first?.end ?? 0, 1)
        XCTAssertLessThan(records.first?.end ?? 3, 2, "cut when asked, not at the end")
        XCTAssertEqual(records.last?.start, records.first?.end)
        XCTAssertEqual(records.last?.end ?? 0, 3, accuracy: 0.03)
        let sizes = try records.map { try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int }
        XCTAssertEqual(sizes, records.map { Int($0.bytes) })
    }
}
