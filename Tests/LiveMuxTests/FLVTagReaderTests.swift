import Foundation
import XCTest
import FFmpeg
@testable import LiveMux

/// `FLVTagReader` on tags made by hand from the specifications (FLV 10.1, Enhanced RTMP v1), and
/// on what LiveMux's own `FLVTagWriter` writes.
final class FLVTagReaderTests: XCTestCase {
    typealias Tag = FLVTagReader.Tag

    static let header: [UInt8] = Array("FLV".utf8) + [1, 5, 0, 0, 0, 9, 0, 0, 0, 0]

    /// One tag: type, 24-bit size, timestamp (24 bits, then the extension byte), stream id 0, the
    /// body, and the PreviousTagSize after it.
    static func tag(_ type: UInt8, _ timestamp: Int, _ body: [UInt8]) -> [UInt8] {
        let be = { (v: Int, n: Int) in (0..<n).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        return [type] + be(body.count, 3) + be(timestamp & 0xFFFFFF, 3) + [UInt8(timestamp >> 24)] + [0, 0, 0] + body
            + be(body.count + 11, 4)
    }

    func readAll(_ bytes: [UInt8]) throws -> (tags: [Tag], reader: FLVTagReader) {
        var reader = try FLVTagReader(Data(bytes))
        var tags: [Tag] = []
        while let t = try reader.next() { tags.append(t) }
        return (tags, reader)
    }

    func payload(_ t: Tag, in bytes: [UInt8]) -> [UInt8] { Array(bytes[t.payload]) }

    /// Enhanced RTMP: SequenceStart, CodedFrames (with an SI24 composition time for hvc1),
    /// CodedFramesX (none), SequenceEnd; av01's CodedFrames carry no composition time.
    func testEnhancedVideoTags() throws {
        let record: [UInt8] = [1, 2, 3], nal: [UInt8] = [0, 0, 0, 2, 0x26, 0x01]
        let hvc1 = Array("hvc1".utf8)
        let chunks = [
            Self.tag(9, 0, [0x90] + hvc1 + record),                      // key | SequenceStart
            Self.tag(9, 0, [0x91] + hvc1 + [0, 0, 66] + nal),            // key | CodedFrames, composition time 66
            Self.tag(9, 33, [0xA3] + hvc1 + nal),                        // inter | CodedFramesX
            Self.tag(9, 0x0123_4567, [0xA3] + hvc1 + nal),               // a timestamp past 24 bits
            Self.tag(9, 0x0123_4567, [0x92] + hvc1),                     // SequenceEnd
            Self.tag(9, 0x0123_4568, [0x91] + Array("av01".utf8) + nal), // av01: no composition time
        ]
        let file = Self.header + chunks.joined()
        let (tags, reader) = try readAll(file)
        XCTAssertEqual(tags.map(\.role), [.sequenceStart, .frame, .frame, .frame, .other, .frame])
        XCTAssertEqual(tags.map(\.isKeyframe), [false, true, false, false, false, true])
        XCTAssertEqual(tags.map(\.codec), ["hevc", "hevc", "hevc", "hevc", "hevc", "av1"])
        XCTAssertEqual(tags.map(\.signalling), ["FourCC hvc1", "FourCC hvc1", "FourCC hvc1", "FourCC hvc1", "FourCC hvc1", "FourCC av01"])
        XCTAssertTrue(tags.allSatisfy(\.isEnhanced))
        XCTAssertEqual(tags.map(\.timestamp), [0, 0, 33, 0x0123_4567, 0x0123_4567, 0x0123_4568])
        XCTAssertEqual(payload(tags[0], in: file), record)
        for t in [tags[1], tags[2], tags[3], tags[5]] { XCTAssertEqual(payload(t, in: file), nal) }
        XCTAssertEqual(tags.map(\.position), chunks.indices.map { i in Self.header.count + chunks[..<i].map(\.count).reduce(0, +) })
        XCTAssertNil(reader.truncatedAt)
    }

    /// Codec id 12 is laid out as AVC: AVCPacketType 0 record, 1 NAL units, 2 end; with AAC
    /// (AACPacketType 0 config, 1 frame) and a script tag, which is no packet.
    func testCodec12AndAACTags() throws {
        let record: [UInt8] = [1, 2, 3], nal: [UInt8] = [0, 0, 0, 2, 0x02, 0x01], asc: [UInt8] = [0x11, 0x90], aac: [UInt8] = [0x21, 0x10]
        var file = Self.header
        file += Self.tag(18, 0, [2, 0, 10] + Array("onMetaData".utf8))
        file += Self.tag(9, 0, [0x1C, 0, 0, 0, 0] + record)
        file += Self.tag(8, 0, [0xAF, 0] + asc)
        file += Self.tag(9, 40, [0x2C, 1, 0, 0, 40] + nal)
        file += Self.tag(8, 21, [0xAF, 1] + aac)
        file += Self.tag(9, 40, [0x1C, 2, 0, 0, 0])
        let (tags, _) = try readAll(file)
        XCTAssertEqual(tags.map(\.kind), [.script, .video, .audio, .video, .audio, .video])
        XCTAssertEqual(tags.map(\.role), [.other, .sequenceStart, .sequenceStart, .frame, .frame, .other])
        XCTAssertEqual(tags.map(\.codec), [nil, "hevc", "aac", "hevc", "aac", "hevc"])
        XCTAssertEqual(tags[1].signalling, "FLV codec id 12")
        XCTAssertEqual(tags.map(\.isKeyframe), [false, false, false, false, true, false])
        XCTAssertFalse(tags.contains(where: \.isEnhanced))
        XCTAssertEqual(payload(tags[1], in: file), record)
        XCTAssertEqual(payload(tags[2], in: file), asc)
        XCTAssertEqual(payload(tags[3], in: file), nal)
        XCTAssertEqual(payload(tags[4], in: file), aac)
    }

    /// Codecs this reader does not take apart are named by their signalling, with no codec.
    func testOtherCodecsHaveNoCodecName() throws {
        var file = Self.header
        file += Self.tag(9, 0, [0x12, 9, 9])  // Sorenson H.263, key
        file += Self.tag(8, 0, [0x2F, 9, 9])  // MP3
        let (tags, _) = try readAll(file)
        XCTAssertEqual(tags.map(\.codec), [nil, nil])
        XCTAssertEqual(tags.map(\.signalling), ["FLV codec id 2", "FLV SoundFormat 2"])
        XCTAssertEqual(tags.map(\.role), [.frame, .frame])
    }

    /// A file cut off inside a tag: the whole tags before it are read, and where it ends is told.
    func testCutOffFile() throws {
        let nal: [UInt8] = [0, 0, 0, 2, 0x26, 0x01]
        let whole = Self.header + Self.tag(9, 0, [0x1C, 1, 0, 0, 0] + nal)
        let cut = whole + Array(Self.tag(9, 40, [0x2C, 1, 0, 0, 0] + nal).prefix(14))
        let (tags, reader) = try readAll(cut)
        XCTAssertEqual(tags.count, 1)
        XCTAssertEqual(reader.truncatedAt, whole.count)
        // The PreviousTagSize after the last tag may be missing: the tag is still whole.
        let (last, lastReader) = try readAll(Array(whole.dropLast(4)))
        XCTAssertEqual(last.count, 1)
        XCTAssertNil(lastReader.truncatedAt)
    }

    func testUnreadableFilesAndTags() throws {
        XCTAssertThrowsError(try FLVTagReader(Data("not an FLV".utf8)))
        let multitrack = Self.header + Self.tag(9, 0, [0x96] + Array("hvc1".utf8) + [0, 0])
        XCTAssertThrowsError(try readAll(multitrack)) { XCTAssertTrue("\($0)".contains("multitrack"), "\($0)") }
        let encrypted = Self.header + Self.tag(9 | 0x20, 0, [0x17, 1, 0, 0, 0])
        XCTAssertThrowsError(try readAll(encrypted)) { XCTAssertTrue("\($0)".contains("encrypted"), "\($0)") }
        let short = Self.header + Self.tag(9, 0, [0x91] + Array("hvc1".utf8) + [0])
        XCTAssertThrowsError(try readAll(short)) { XCTAssertTrue("\($0)".contains("shorter than its header"), "\($0)") }
    }

    /// What `FLVTagWriter` writes, both ways it signals HEVC, reads back tag for tag: the hvcC,
    /// the AudioSpecificConfig, each frame's NAL units (4-byte lengths) and key flag, and the
    /// end of sequence as no packet.
    func testReadsWhatFLVTagWriterWrites() throws {
        let start: [UInt8] = [0, 0, 0, 1]
        let sets = start + HEVCConfigurationRecordTests.vps + start + HEVCConfigurationRecordTests.sps + start + HEVCConfigurationRecordTests.pps
        let video = try CodecParameters.video(hevc: true, width: 320, height: 240, extradata: sets)
        let asc = try XCTUnwrap(AudioSpecificConfig.make(sampleRate: 48000, channels: 2))
        let audio = try CodecParameters.aac(sampleRate: 48000, channels: 2, extradata: asc)
        let slice: [UInt8] = [0x26, 0x01, 0xAF, 0x1D], audioFrame: [UInt8] = [0x21, 0x10, 0x05]
        for mode in FLVHEVCMode.allCases {
            let writer = try FLVTagWriter(streams: [(.video, video), (.audio, audio)], seekable: false, mode: mode)
            var file = try writer.writeHeader().array
            // (stream, dts, pts, key): a keyframe, audio, a frame shown later (composition time 33), one shown at once.
            let packets: [(Int, Int64, Int64, Bool)] = [(0, 0, 0, true), (1, 0, 0, true), (0, 33, 66, false), (0, 66, 66, false)]
            for (stream, dts, pts, key) in packets {
                let p = try Packet(copying: stream == 0 ? start + slice : audioFrame)
                p.isKeyframe = key
                file += try writer.write(p, stream: stream, pts: pts, dts: dts, duration: 0).array
            }
            file += try writer.writeTrailer().appended
            let (tags, reader) = try readAll(file)
            let media = tags.filter { $0.kind != .script }
            XCTAssertEqual(media.map(\.kind), [.video, .audio, .video, .audio, .video, .video, .video], "\(mode)")
            XCTAssertEqual(media.map(\.role), [.sequenceStart, .sequenceStart, .frame, .frame, .frame, .frame, .other], "\(mode)")
            XCTAssertEqual(media.map(\.isKeyframe), [false, false, true, true, false, false, false], "\(mode)")
            XCTAssertEqual(media.map(\.timestamp), [0, 0, 0, 0, 33, 66, 66], "\(mode)")
            XCTAssertEqual(media[0].codec, "hevc")
            XCTAssertEqual(media[0].isEnhanced, mode == .enhanced)
            XCTAssertEqual(payload(media[0], in: file), try HEVCConfigurationRecord.make(fromAnnexB: sets), "\(mode)")
            XCTAssertEqual(payload(media[1], in: file), asc)
            for v in [media[2], media[4], media[5]] { XCTAssertEqual(payload(v, in: file), [0, 0, 0, 4] + slice, "\(mode)") }
            XCTAssertEqual(payload(media[3], in: file), audioFrame)
            XCTAssertNil(reader.truncatedAt)
        }
    }
}
