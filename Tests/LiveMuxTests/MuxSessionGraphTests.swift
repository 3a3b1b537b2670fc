import Foundation
import XCTest
import POSIX
import FFmpeg
@testable import LiveMux

/// The output graph `MuxSession` builds: one container writer per container and kind of
/// destination (files seek back to finish their header, streams do not), each with its sinks in
/// the order given; live viewers get a hub on every container's stream and the browsers' MP4; a `Muxer`'s own sinks
/// join the writer of their container and kind. Then packets through a real graph: outputs of one
/// writer get the same bytes, outputs of another writer their own.
final class MuxSessionGraphTests: TemporaryDirectoryTestCase {
    /// Each writer as "container seekable|stream: its sinks' names" (this test's directory left out).
    func graph(_ session: MuxSession) -> [String] {
        session.routes.map { route in
            XCTAssertEqual(route.writer?.format, route.format)
            XCTAssertEqual(route.writer?.seekable, route.seekable)
            let names = route.sinks.map { $0.name.replacingOccurrences(of: dir + "/", with: "") }
            // No container: the browsers' fragmented MP4 (BrowserStream).
            return "\(route.format?.rawValue ?? "mp4") \(route.seekable ? "file" : "stream"): \(names.joined(separator: ", "))"
        }
    }

    func session(_ destinations: [(Destination, ContainerFormat)], listen: ListenAddress? = nil,
                 extraRoute: (format: ContainerFormat, seekable: Bool, sinks: [ChunkSink])? = nil) throws -> MuxSession {
        var outputs = Outputs()
        outputs.destinations = destinations.map { OutputSpec(destination: $0.0, format: $0.1) }
        outputs.listen = listen
        try outputs.validate()
        let queue = MuxQueue(streams: [.video, .audio], capacity: 8, singleProducer: true)
        let streams = try ContainerWriterTests.streams(video: .milliseconds, audio: Rational(1, 48000))
        return try MuxSession(queue: queue, outputs: outputs, streams: streams, extraRoute: extraRoute, report: { _ in })
    }

    func testOneWriterPerContainerAndKindOfDestination() throws {
        let s = try session([(.file("\(dir)/a.flv"), .flv), (.network("rtmp://127.0.0.1:1/live/key"), .flv),
                             (.file("\(dir)/b.asf"), .asf), (.standardOutput, .flv), (.file("\(dir)/c.flv"), .flv),
                             (.network("tcp://127.0.0.1:1"), .asf)])
        XCTAssertEqual(graph(s), ["flv file: a.flv, c.flv", "flv stream: rtmp://127.0.0.1:1/live/****, stdout",
                                  "asf file: b.asf", "asf stream: tcp://127.0.0.1:1"])
    }

    func testLiveViewersGetAHubOnEveryContainersStream() throws {
        let s = try session([(.file("\(dir)/a.asf"), .asf), (.standardOutput, .asf)], listen: ListenAddress(host: "127.0.0.1", port: 0))
        XCTAssertEqual(graph(s), ["asf file: a.asf", "asf stream: /live.asf, stdout", "flv stream: /live.flv", "mp4 stream: /live.mp4, /live.m3u8"],
                       "the hubs first (made before any sink), then the outputs; browsers' MP4 and HLS from the same packets last")
    }

    func testAMuxersOwnSinksJoinTheWriterOfTheirContainerAndKind() throws {
        let own = CollectingSink()
        let s = try session([(.standardOutput, .flv), (.file("\(dir)/a.flv"), .flv)], extraRoute: (.flv, false, [own]))
        XCTAssertEqual(graph(s), ["flv stream: collector, stdout", "flv file: a.flv"])
    }

    /// Two files of one container share a writer: the same bytes, trailer updates included. The
    /// stream of that container has its own writer: no duration or size in its header, so other bytes.
    func testOutputsOfOneWriterGetTheSameBytes() throws {
        let stream = CollectingSink()
        let s = try session([(.file("\(dir)/a.flv"), .flv), (.file("\(dir)/b.flv"), .flv)], extraRoute: (.flv, false, [stream]))
        XCTAssertNil(try run(s))
        let a = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/a.flv")), b = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/b.flv"))
        XCTAssertEqual(a, b, "one writer: the same bytes")
        XCTAssertNotEqual(a, Data(stream.bytes), "the stream's own writer")
        for file in [a, Data(stream.bytes)] {
            var reader = try FLVTagReader(file)
            var frames = 0
            while let tag = try reader.next() { frames += tag.role == .frame ? 1 : 0 }
            XCTAssertEqual(frames, 77, "every packet, readable")
        }
    }

    /// The first output given fails at its first write (/dev/full, a character device: a stream):
    /// the recording is measured on the next (its media time and bytes go on), and the last
    /// states say `failed: why` for it and `finished` for the file, in the order given.
    func testTheMeasureGoesOnWhenTheFirstOutputFails() throws {
        let file = "\(dir)/a.asf"
        let s = try session([(.file("/dev/full"), .flv), (.file(file), .asf)])
        XCTAssertEqual(graph(s), ["flv stream: /dev/full", "asf file: a.asf"])
        XCTAssertEqual(s.statistics.snapshot.outputStates, ["o0": .writing, "o1": .writing])
        XCTAssertNotNil(try run(s), "1 of 2 outputs failed")
        let after = s.statistics.snapshot
        XCTAssertEqual(after.outputKeys, ["o0", "o1"])
        XCTAssertEqual(after.outputLabels, ["o0": "/dev/full", "o1": file])
        XCTAssertEqual(after.outputStates["o1"], .finished)
        XCTAssertEqual(after.outputStates["o0"], .failed("cannot write to /dev/full: the disk is full (free some space or record to another disk)"))
        XCTAssertEqual(after.mediaTime, 1, accuracy: 0.05, "measured on a.asf")
        XCTAssertGreaterThan(after.bytesOut, 0, "a.asf's media bytes")
    }

    /// Pushes one second of each stream in time order from one thread, ends them and finishes
    /// the session; what `finish` threw.
    func run(_ s: MuxSession) throws -> Error? {
        s.start()
        let samples = Rational(1, 48000)
        var packets: [(ms: Double, packet: EncodedPacket)] = []
        for i in 0..<30 {
            let video = try Packet(copying: ContainerWriterTests.slice)
            (video.dts, video.pts, video.isKeyframe) = (Int64(i) * 100 / 3, Int64(i) * 100 / 3, i == 0)
            packets.append((Double(video.dts), EncodedPacket(stream: .video, packet: video, timeBase: .milliseconds)))
        }
        for i in 0..<47 {
            let audio = try Packet(copying: ContainerWriterTests.aacFrame)
            (audio.dts, audio.pts, audio.isKeyframe) = (Int64(i) * 1024, Int64(i) * 1024, true)
            packets.append((Double(audio.dts) / 48, EncodedPacket(stream: .audio, packet: audio, timeBase: samples)))
        }
        let inOrder = packets.sorted(by: { $0.ms < $1.ms }).map(\.packet)
        let errors = ErrorBox()
        let producer = WatchedThread("producer") {
            for p in inOrder where !s.queue.push(p) { return errors.set(LiveMuxError.output("the queue refused a packet")) }
            s.queue.end(.video)
            s.queue.end(.audio)
            do { try s.finish() } catch { errors.set(error) }
        }
        guard producer.finishes(within: MuxQueueTests.deadline) else {
            s.queue.cancel()
            XCTFail("the session did not finish")
            return nil
        }
        return errors.error
    }
}

/// A sink of the test's own, as an app's: keeps every byte.
final class CollectingSink: ChunkSink, @unchecked Sendable {
    let name = "collector"
    private let collected = Locked<[UInt8]>([])

    func write(_ chunk: Chunk) throws { collected.withLock { $0 += chunk.bytes } }
    func close() throws {}
    var bytes: [UInt8] { collected.withLock { $0 } }
}
