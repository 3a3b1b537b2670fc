import Foundation
import XCTest

/// `livemux mux` takes every destination `record` does (issue 15, item 1): several -o at once,
/// URLs (paced at the file's own timestamps by default), --listen, --realtime.
final class MuxOutputsTests: TemporaryDirectoryTestCase {
    var clip = ""
    /// The clip's video frames and its length in seconds.
    static let frames = 60, seconds = 2.0

    override func setUpWithError() throws {
        try super.setUpWithError()
        clip = "\(dir)/clip.mp4"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30",
                                            "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "\(Self.seconds)",
                                            "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-c:a", "aac", clip])
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    func videoPackets(_ path: String) throws -> Int { try Tools.probe(path).stream("video")?.packetCount ?? 0 }

    /// One read, three outputs of two containers; unpaced (no network output), so it is quick.
    func testSeveralOutputsAtOnce() throws {
        let started = Date()
        let r = try Tools.livemux(["mux", "-q", "--input", clip, "-o", "\(dir)/a.flv", "-o", "\(dir)/b.asf", "-o", "\(dir)/c.asf"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), Self.seconds, "files are not paced")
        for name in ["a.flv", "b.asf", "c.asf"] {
            XCTAssertEqual(try videoPackets("\(dir)/\(name)"), Self.frames, name)
            XCTAssertEqual(try Tools.decodeErrors("\(dir)/\(name)"), "", name)
        }
    }

    /// --realtime paces a file output at the clip's own timestamps, like ffmpeg -re.
    func testRealtimePacesAtTheFilesTimestamps() throws {
        let started = Date()
        let r = try Tools.livemux(["mux", "-q", "--realtime", "--input", clip, "-o", "\(dir)/paced.flv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThan(Date().timeIntervalSince(started), Self.seconds - 0.2, "took the clip's own time")
        XCTAssertEqual(try videoPackets("\(dir)/paced.flv"), Self.frames)
    }

    /// A URL output: pushed to a real nginx-rtmp, paced by default, the key never printed,
    /// every frame recorded there beside a local file.
    func testPushToNginxWithAFileBeside() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp: run scripts/setup --test")
        let server = try RTMPServer(directory: dir)
        try server.start()
        defer { server.stop() }
        let key = "MUXSECRETKEY"
        let started = Date()
        let r = try Tools.livemux(["mux", "--input", clip, "-o", "rtmp://127.0.0.1:\(server.port)/live/\(key)", "-o", "\(dir)/local.asf"],
                                  timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains(key), r.stderr)
        XCTAssertGreaterThan(Date().timeIntervalSince(started), Self.seconds - 0.2, "a URL output is paced by default")
        XCTAssertEqual(try videoPackets("\(dir)/local.asf"), Self.frames)
        server.stop()  // finishes its recording
        let recorded = try XCTUnwrap(try server.recordedFiles().first, "nginx recorded the push")
        XCTAssertEqual(try videoPackets(recorded), Self.frames, "every frame reached nginx")
        XCTAssertEqual(try Tools.decodeErrors(recorded), "")
    }

    /// --listen serves the file to live viewers, who get it from a keyframe and decode it.
    func testListenServesViewers() throws {
        // A longer loop of the clip, so a viewer that joins after the start still sees frames.
        let long = "\(dir)/long.mp4"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-stream_loop", "2", "-i", clip, "-c", "copy", long])
        XCTAssertEqual(made.status, 0, made.stderr)
        let mux = try ServingLivemux(["mux", "--input", long, "--listen", "127.0.0.1:0"], directory: dir)
        let flv = try XCTUnwrap(mux.viewerURLs()?.first, "the URLs are printed at start")
        let out = "\(dir)/viewer.flv"
        let viewer = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", flv, "-c", "copy", "-f", "flv", out], timeout: 20)
        XCTAssertEqual(viewer.status, 0, viewer.stderr)
        XCTAssertGreaterThan(try videoPackets(out), Self.frames, "a viewer gets more than a second of the paced stream")
        XCTAssertEqual(try Tools.decodeErrors(out), "")
        XCTAssertEqual(mux.wait(), 0, mux.stderr)
    }

    func testOutputMistakesAreUsageErrors() throws {
        for (args, message) in [
            (["-o", "\(dir)/x.flv", "-o", "\(dir)/x.flv"], "name the same file: give each -o its own file"),
            (["-f", "flv", "-o", clip], "is also the input"),
            (["-f", "asf", "-o", "rtmp://127.0.0.1:1/live/k"], "RTMP carries FLV only"),
            (["-o", "-", "-o", "-"], "stdout can take only one output"),
        ] {
            let r = try Tools.livemux(["mux", "--input", clip] + args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.hasPrefix("error: ") && r.stderr.contains(message), "\(args): \(r.stderr)")
        }
    }
}
