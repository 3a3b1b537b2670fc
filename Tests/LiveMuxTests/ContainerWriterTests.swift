import Foundation
import XCTest
import FFmpeg
@testable import LiveMux

/// `ContainerWriter`'s timestamp rules, through libavformat's real ASF and FLV muxers: each
/// packet is rescaled into the time base the muxer chose (milliseconds for both), DTS is kept
/// strictly increasing per stream (a packet that rounds onto the previous millisecond gets one
/// more, one that rounds before it is dropped), and DTS never goes back across streams. The
/// timestamps are read from the chunks' labels and, for FLV, from the tags in the bytes.
final class ContainerWriterTests: XCTestCase {
    /// An H.264 SPS and PPS of libx264 (160x120, baseline), in Annex B.
    static let parameterSets: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x0b, 0xda, 0x0a, 0x11, 0xf9, 0x70, 0x11, 0x00, 0x00,
                                         0x03, 0x00, 0x01, 0x00, 0x00, 0x03, 0x00, 0x3c, 0x0f, 0x14, 0x2a, 0xa0,
                                         0, 0, 0, 1, 0x68, 0xce, 0x0f, 0xc8]
    /// A slice NAL unit, and a raw AAC frame: what the muxers copy, never decoded.
    static let slice: [UInt8] = [0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00, 0x21]
    static let aacFrame: [UInt8] = [0x21, 0x10, 0x05, 0x00]

    static func streams(video videoBase: Rational, audio audioBase: Rational) throws -> [ContainerWriter.StreamDescription] {
        let video = try CodecParameters.video(hevc: false, width: 160, height: 120, extradata: parameterSets)
        let config = try XCTUnwrap(AudioSpecificConfig.make(sampleRate: 48000, channels: 2))
        let audio = try CodecParameters.aac(sampleRate: 48000, channels: 2, extradata: config)
        return [.init(kind: .video, parameters: video, timeBase: videoBase), .init(kind: .audio, parameters: audio, timeBase: audioBase)]
    }

    func packet(_ stream: StreamKind, dts: Int64, pts: Int64? = nil, in base: Rational) throws -> EncodedPacket {
        let p = try Packet(copying: stream == .video ? Self.slice : Self.aacFrame)
        p.dts = dts
        p.pts = pts ?? dts
        p.isKeyframe = true
        return EncodedPacket(stream: stream, packet: p, timeBase: base)
    }

    /// Writes the header and each packet; per packet, the DTS the chunk is labelled with (nil:
    /// dropped), and every byte written.
    func write(_ writer: ContainerWriter, _ packets: [EncodedPacket]) throws -> (dts: [Int64?], bytes: [UInt8]) {
        var bytes = try writer.header().bytes
        var dts: [Int64?] = []
        for p in packets {
            let chunk = try writer.write(p)
            if case .media(let stream, let d, _) = chunk?.kind {
                XCTAssertEqual(stream, p.stream)
                dts.append(d)
            } else {
                XCTAssertNil(chunk, "a media packet makes a media chunk or none")
                dts.append(nil)
            }
            bytes += chunk?.bytes ?? []
        }
        return (dts, bytes + (try writer.trailer().bytes))
    }

    /// The FLV frames' (kind, DTS, composition time = PTS − DTS), in file order.
    func flvFrames(_ bytes: [UInt8]) throws -> [(kind: FLVTagReader.Tag.Kind, dts: Int64, cts: Int)] {
        var reader = try FLVTagReader(Data(bytes))
        var frames: [(FLVTagReader.Tag.Kind, Int64, Int)] = []
        while let tag = try reader.next() {
            guard tag.role == .frame else { continue }
            // An AVC video tag: codec byte, AVCPacketType, then a signed 24-bit composition time.
            var cts = 0
            if tag.kind == .video {
                let at = tag.position + 11 + 2
                cts = Int(bytes[at]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
                if cts >= 1 << 23 { cts -= 1 << 24 }
            }
            frames.append((tag.kind, tag.timestamp, cts))
        }
        return frames
    }

    /// Video in 1/90000 (MPEG-TS's clock): 0.33 ms steps round onto the millisecond before.
    func testAPacketRoundingOntoThePreviousMillisecondGetsOneMore() throws {
        let ticks = Rational(1, 90000)
        for format in ContainerFormat.allCases {
            let writer = try ContainerWriter(format: format, seekable: false,
                                             streams: try Self.streams(video: ticks, audio: Rational(1, 48000)))
            // PTS 33 ms after DTS (a reordered stream): the bump keeps that distance.
            let dts: [Int64] = [0, 30, 60, 100, 270]
            let packets = try dts.map { try packet(.video, dts: $0, pts: $0 + 3000, in: ticks) }
            let written = try write(writer, packets)
            // 0 → 0; 0.33 → 0, taken → 1; 0.67 → 1, taken → 2; 1.11 → 1, before 2: dropped; 3 → 3.
            XCTAssertEqual(written.dts, [0, 1, 2, nil, 3], "\(format)")
            XCTAssertEqual(packets.map(\.packet.dts), dts, "\(format): the packet is left as it was")
            if format == .flv {
                let frames = try flvFrames(written.bytes)
                XCTAssertEqual(frames.map(\.dts), [0, 1, 2, 3])
                // A packet given one more millisecond of DTS gets one more of PTS: (0.33, 33.67) →
                // (0, 34) → (1, 35); (0.67, 34) → (1, 34) → (2, 35).
                XCTAssertEqual(frames.map(\.cts), [33, 34, 33, 33])
            }
        }
    }

    /// A packet of one stream before what the other stream already wrote is dropped (ASF aborts
    /// on DTS going back inside one of its packets); one at the same millisecond goes.
    func testDTSNeverGoesBackAcrossStreams() throws {
        let samples = Rational(1, 48000)
        for format in ContainerFormat.allCases {
            let writer = try ContainerWriter(format: format, seekable: false, streams: try Self.streams(video: .milliseconds, audio: samples))
            let packets = [try packet(.video, dts: 0, in: .milliseconds), try packet(.audio, dts: 1024, in: samples),
                           try packet(.video, dts: 40, in: .milliseconds),
                           try packet(.audio, dts: 1440, in: samples),  // 30 ms: after its own 21, before video's 40
                           try packet(.audio, dts: 1920, in: samples),  // 40 ms: the same as video's
                           try packet(.video, dts: 41, in: .milliseconds)]
            let written = try write(writer, packets)
            XCTAssertEqual(written.dts, [0, 21, 40, nil, 40, 41], "\(format)")
            if format == .flv {
                XCTAssertEqual(try flvFrames(written.bytes).map(\.dts), [0, 21, 40, 40, 41])
                XCTAssertEqual(try flvFrames(written.bytes).map(\.kind), [.video, .audio, .video, .audio, .video])
            }
        }
    }

    /// Video in 1/30 and audio in 1/48000 come out in the muxer's milliseconds, rounded to the
    /// nearest (halves away from zero).
    func testTimestampsAreRescaledIntoTheContainersTimeBase() throws {
        let frames = Rational(1, 30), samples = Rational(1, 48000)
        for format in ContainerFormat.allCases {
            let writer = try ContainerWriter(format: format, seekable: true, streams: try Self.streams(video: frames, audio: samples))
            let packets = [try packet(.video, dts: 0, pts: 1, in: frames), try packet(.audio, dts: 0, in: samples),
                           try packet(.audio, dts: 1024, in: samples), try packet(.video, dts: 1, pts: 2, in: frames),
                           try packet(.audio, dts: 2048, in: samples), try packet(.audio, dts: 3072, in: samples),
                           try packet(.video, dts: 2, pts: 3, in: frames)]
            let written = try write(writer, packets)
            // 1024/48000 s = 21.33 ms; 2048 → 42.67; 3072 → 64; frames at 33.33 and 66.67 ms.
            XCTAssertEqual(written.dts, [0, 0, 21, 33, 43, 64, 67], "\(format)")
            if format == .flv {
                let tags = try flvFrames(written.bytes)
                XCTAssertEqual(tags.map(\.dts), [0, 0, 21, 33, 43, 64, 67])
                // PTS one frame after DTS: 33.33 → 33, 66.67 − 33.33 → 67 − 33, 100 − 66.67 → 100 − 67.
                XCTAssertEqual(tags.filter { $0.kind == .video }.map(\.cts), [33, 34, 33])
            }
        }
    }

    /// A segment's writer (origin: its keyframe, off the millisecond grid) puts 30 fps video on
    /// the grid the first segment has (0, 33, 67, 100 ms: rescaled after the origin is taken
    /// off, not as two rounded milliseconds, which gave 0, 33, 66, 100), and an audio start that
    /// lands half a frame after the keyframe (17 ms) one millisecond further (issue 38: ffmpeg's
    /// CLI gave two frames of such an ASF segment one slot); 16 and 18 ms stay where they are.
    func testASegmentKeepsItsFramesOnTheGridAndItsAudioClearOfHalfAFrame() throws {
        let video = Rational(1, 30), audio = Rational(1, 48000)
        let keyframe: Int64 = 31  // 1033.33 ms
        for (audioStart, written) in [(Int64(17), Int64(18)), (16, 16), (18, 18)] {
            let writer = try ContainerWriter(format: .asf, seekable: false, streams: try Self.streams(video: video, audio: audio),
                                             origin: (keyframe, video))
            let first = keyframe * 1600 + audioStart * 48  // samples
            let packets = [try packet(.video, dts: keyframe, in: video), try packet(.audio, dts: first, in: audio),
                           try packet(.video, dts: keyframe + 1, in: video), try packet(.audio, dts: first + 1024, in: audio),
                           try packet(.video, dts: keyframe + 2, in: video), try packet(.video, dts: keyframe + 3, in: video)]
            packets.forEach { $0.packet.duration = $0.stream == .video ? 1 : 1024 }
            let dts = try write(writer, packets).dts
            XCTAssertEqual(dts, [0, written, 33, written + 21, 67, 100], "audio \(audioStart) ms after the keyframe")
        }
    }
}
