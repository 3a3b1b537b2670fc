import Foundation
import XCTest
import POSIX
import FFmpeg
@testable import LiveMux

/// A `Muxer` keeps the packets that come before every stream's parameters are known (`pending`)
/// and, once they are, pushes them into its queue under `stateLock` (`startLocked`), on the
/// thread whose packet completed them. With a thread per stream (`singleProducer: false`) and more
/// pending video than `queueCapacity`, that push waits for room only audio can make, while the
/// first audio packet is the one this very thread is adding (issue 27, item 6): it deadlocked,
/// until the pending packets were pushed without waiting for room.
final class MuxerPendingPushTests: XCTestCase {
    static let capacity = 4, videoFrames = 10, audioFrames = 15
    /// Far longer than these adds take on a loaded machine (milliseconds).
    static let deadline = 5.0

    func testPendingVideoPastTheQueueCapacityDoesNotHoldUpTheFirstAudioPacket() throws {
        let media = MediaChunkCount()
        let muxer = try Muxer(format: .flv,
                              video: .init(codec: .h264, width: 160, height: 120, extradata: ContainerWriterTests.parameterSets),
                              audio: .init(sampleRate: 48000, channels: 2),  // raw AAC: its config is known at its first frame
                              queueCapacity: Self.capacity, singleProducer: false, onChunk: { media.add($0) })
        let errors = ErrorBox()
        // Video from its own thread, 30 fps in milliseconds: no audio configuration yet, so it waits.
        let video = WatchedThread("video") {
            do {
                for i in 0..<Self.videoFrames {
                    let slice: [UInt8] = i == 0 ? ContainerWriterTests.slice : [0, 0, 0, 1, 0x41, 0x9a, 0x00, 0x10]
                    try muxer.addVideo(slice, pts: Int64(i) * 100 / 3, isKeyframe: i == 0)
                }
            } catch { errors.set(error) }
        }
        XCTAssertTrue(video.finishes(within: Self.deadline), "pending packets never wait")
        // Then audio from another thread: its first frame starts the muxer.
        let audio = WatchedThread("audio") {
            do {
                for i in 0..<Self.audioFrames {
                    try muxer.addAudio(ContainerWriterTests.aacFrame, pts: Int64(i) * 1024, timescale: 48000)
                }
            } catch { errors.set(error) }
        }
        guard audio.finishes(within: Self.deadline) else {
            let depths = muxer.session.queue.depths
            muxer.cancel()  // releases the stuck push, so nothing stays blocked in the suite
            return XCTFail("the first addAudio never returned: the pending video waited for room only audio can make "
                           + "(queue depths: video \(depths[.video] ?? -1), audio \(depths[.audio] ?? -1))")
        }
        XCTAssertNil(errors.error)
        try muxer.finish()
        XCTAssertEqual(media.counts.video, Self.videoFrames)
        XCTAssertEqual(media.counts.audio, Self.audioFrames)
        XCTAssertEqual(muxer.warnings, [:], "nothing dropped")
    }
}

/// Media chunks a muxer delivered, per stream (counted on the mux thread, read by the test).
final class MediaChunkCount: Sendable {
    private let count = Locked((video: 0, audio: 0))

    func add(_ chunk: Chunk) {
        guard case .media(let stream, _, _) = chunk.kind else { return }
        count.withLock { if stream == .video { $0.video += 1 } else { $0.audio += 1 } }
    }

    var counts: (video: Int, audio: Int) { count.withLock { $0 } }
}
