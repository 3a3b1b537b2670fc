import Foundation
import XCTest

/// What livemux says about a device on the device rig's private X server: a device that is there
/// but refused its options is not told to pick another one (issue 32, item 11), and a screen
/// grab, which states its rate, is not said to give none (item 12).
final class DeviceHintTests: XCTestCase {
    var rig: DeviceRig!

    override func setUpWithError() throws { rig = try DeviceRig() }
    override func tearDown() { rig?.stop() }

    func record(_ arguments: [String]) throws -> Tools.Result {
        let out = "\(rig.dir)/out-\(UUID().uuidString).asf"
        return try Tools.run(Tools.livemux, ["record", "--no-audio", "-t", "1"] + arguments + ["-o", out], environment: rig.environment, timeout: 30)
    }

    /// x11grab always warned "the source gives no frame rate", even with framerate=30: libavdevice
    /// states a device's rate as avg_frame_rate, which is its rate, not a fallback.
    func testX11GrabFrameRateIsItsOwn() throws {
        for (options, frames) in [([String](), 30), (["--video-opt", "framerate=30"], 30), (["--video-opt", "framerate=15"], 15)] {
            let out = "\(rig.dir)/grab-\(frames)-\(options.count).asf"
            let r = try Tools.run(Tools.livemux, ["record", "--no-audio", "-t", "1", "--video", "x11grab:\(rig.display)"] + options + ["-o", out],
                                  environment: rig.environment, timeout: 30)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }, [], "\(options)")
            let video = try XCTUnwrap(Tools.probe(out).stream("video"))
            XCTAssertEqual(Double(video.packetCount), Double(frames), accuracy: 1, "\(options): recorded at the screen grab's rate")
        }
    }

    /// video_size=4000x4000 said "Invalid argument; x11grab offers :N", the display it was given.
    func testX11GrabSizeLargerThanTheScreenIsNamed() throws {
        let big = try record(["--video", "x11grab:\(rig.display)", "--video-opt", "video_size=4000x4000"])
        XCTAssertEqual(big.status, 1, big.stderr)
        XCTAssertEqual(big.stderr, "error: cannot open input 'x11grab:\(rig.display)': Invalid argument; video_size=4000x4000 is larger than"
                       + " the screen of \(rig.display), \(DeviceRig.screenSize) (give a size within it, or no video_size for the whole screen)\n")
        let bad = try record(["--video", "x11grab:\(rig.display).0", "--video-opt", "video_size=wide"])
        XCTAssertEqual(bad.status, 1, bad.stderr)
        XCTAssertTrue(bad.stderr.hasSuffix("; x11grab lists \(rig.display), so it refused an option (video_size=wide): see ffmpeg -h demuxer=x11grab\n"),
                      bad.stderr)
        XCTAssertFalse(bad.stderr.contains("offers"), bad.stderr)
        // A display that is not there still gets what there is.
        let missing = try record(["--video", "x11grab::9999"])
        XCTAssertEqual(missing.status, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("x11grab offers ") && missing.stderr.contains(rig.display), missing.stderr)
    }
}
