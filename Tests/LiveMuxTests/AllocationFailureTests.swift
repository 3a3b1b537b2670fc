import XCTest
import FFmpeg

/// The wrappers' failure paths, through libavutil's own allocation cap and invalid parameters.
/// Under `scripts/test --sanitize address` LeakSanitizer also checks that a throwing init frees
/// what it had allocated.
final class AllocationFailureTests: XCTestCase {
    override func setUp() { FFmpegLog.setLevel(.quiet) }

    /// Packet, Frame and CodecParameters threw nothing: a NULL from their allocation was a crash.
    func testAFailedAllocationThrowsNamingTheFunction() {
        AllocationLimit.set(1)
        defer { AllocationLimit.set(AllocationLimit.defaultBytes) }
        XCTAssertThrowsError(try Packet()) { XCTAssertEqual(($0 as? FFmpegError)?.function, "av_packet_alloc") }
        XCTAssertThrowsError(try Frame()) { XCTAssertEqual(($0 as? FFmpegError)?.function, "av_frame_alloc") }
        XCTAssertThrowsError(try CodecParameters.aac(sampleRate: 48000, channels: 2, extradata: [0x11, 0x90])) {
            XCTAssertEqual(($0 as? FFmpegError)?.function, "avcodec_parameters_alloc")
        }
    }

    /// swr_init refuses a rate of 0 after swr_alloc_set_opts2 allocated the context, which the
    /// half-initialised Resampler used to leak.
    func testAResamplerThatCannotInitialiseThrows() {
        XCTAssertThrowsError(try Resampler(inputRate: 0, inputChannels: 2, inputFormat: SampleFormat.floatPlanar.rawValue,
                                           outputRate: 48000, outputChannels: 2, outputFormat: .floatPlanar)) {
            XCTAssertEqual(($0 as? FFmpegError)?.function, "swr_init")
        }
    }
}
