import Foundation
import XCTest

/// Past one machine (docs/scaling.md): livemux pushes RTMP to an nginx-rtmp origin; an edge pulls
/// the stream from it (`pull … static`: connected before livemux publishes, so it gets the first
/// keyframe; a `push` relay connects after the publish and misses the first GOP's video, see
/// docs/scaling.md); players read from the edge. Every frame livemux sent arrives at the edge, and
/// what a player of the edge receives decodes.
final class RelayTests: TemporaryDirectoryTestCase {
    let key = "relayKEY7"
    let seconds = 4
    let fps = 30

    func testOriginRelaysEveryFrameToTheEdgeAndItsPlayers() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let origin = try RTMPServer(directory: dir, name: "origin")
        let edge = try RTMPServer(directory: dir, name: "edge",
                                  application: "pull rtmp://127.0.0.1:\(origin.port)/live/\(key) name=\(key) static;")
        try origin.start()
        defer { origin.stop() }
        try edge.start()
        defer { edge.stop() }
        // The edge's static pull is playing (waiting for the publish) at the origin.
        XCTAssertTrue(waitUntil(deadline: 10) { origin.log.contains("play: name='\(key)'") }, origin.log)

        var player: ChildProcess?
        let r = try Tools.livemux(["record", "--size", "320x240", "--fps", String(fps), "-t", String(seconds),
                                   "-o", "\(dir)/sent.flv", "-o", "rtmp://127.0.0.1:\(origin.port)/live/\(key)"], timeout: 30) { _ in
            usleep(1_000_000)  // the player joins a second in, as asserted below
            player = try? ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-rw_timeout", "5000000",
                                                "-i", "rtmp://127.0.0.1:\(edge.port)/live/\(self.key)", "-c", "copy", "\(self.dir)/player.flv"],
                                     directory: self.dir, name: "player")
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let played = try XCTUnwrap(player)
        // A static pull outlives the publish: stopping the edge finishes its recording and ends the player.
        edge.stop()
        played.finish(within: 15)
        origin.stop()

        let sent = try Tools.probe("\(dir)/sent.flv")
        let sentVideo = try XCTUnwrap(sent.stream("video")).packetCount
        let sentAudio = try XCTUnwrap(sent.stream("audio")).packetCount
        XCTAssertEqual(sentVideo, seconds * fps, "livemux's own copy has every frame")

        let relayed = try edge.recordedFiles()
        XCTAssertEqual(relayed.count, 1, "one relayed publish at the edge: \(relayed)")
        let atEdge = try Tools.probe(try XCTUnwrap(relayed.first))
        XCTAssertEqual(atEdge.stream("video")?.packetCount, sentVideo, "every video frame reaches the edge")
        XCTAssertEqual(atEdge.stream("audio")?.packetCount, sentAudio, "every audio frame reaches the edge")
        XCTAssertEqual(try Tools.decodeErrors(relayed[0]), "", "the edge's copy decodes")

        // The player joined a second in: it starts at a keyframe and has the rest of the stream.
        let atPlayer = try Tools.probe("\(dir)/player.flv")
        XCTAssertGreaterThanOrEqual(atPlayer.stream("video")?.packetCount ?? 0, (seconds - 2) * fps, played.stderrFile)
        XCTAssertEqual(atPlayer.stream("audio")?.codec_name, "aac")
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/player.flv"), "", "what the edge's player got decodes")
    }
}
