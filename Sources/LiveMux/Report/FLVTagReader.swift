import Foundation

/// Reads the tags of an FLV file back, for `livemux report`, where FFmpeg 5.1's FLV reader cannot:
/// HEVC as Enhanced RTMP (FourCC `hvc1`) or as codec id 12, laid out as `FLVTagWriter` writes them
/// (docs/architecture.md, "HEVC in FLV"). Pure: bytes in, tags out; nothing is decoded.
struct FLVTagReader {
    /// One tag, told by what it holds.
    struct Tag: Equatable {
        enum Kind: Equatable { case audio, video, script }
        /// A frame is a media packet; a sequence start carries the decoder configuration (hvcC,
        /// avcC, AudioSpecificConfig); anything else (sequence end, metadata, command frames,
        /// script data) is no packet.
        enum Role: Equatable { case sequenceStart, frame, other }

        let kind: Kind
        let role: Role
        /// An Enhanced RTMP video tag (IsExHeader set).
        let isEnhanced: Bool
        let isKeyframe: Bool
        /// The codec as libavcodec names it ("hevc", "h264", "aac"); nil for one this reader
        /// does not take apart.
        let codec: String?
        /// How the tag names its codec ("FourCC hvc1", "FLV codec id 12"); nil for script data.
        let signalling: String?
        /// The DTS in milliseconds.
        let timestamp: Int64
        /// Where the tag starts in the file.
        let position: Int
        /// The bytes after the codec's own header: NAL units, an AAC frame, or the configuration.
        let payload: Range<Int>
    }

    /// A tag this reader cannot take apart, or a file that is not FLV: the message says which.
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    private let bytes: Data
    private var offset: Int
    /// Where the file ends inside a tag (cut off mid-write); nil while every tag read was whole.
    private(set) var truncatedAt: Int?

    /// The file header: "FLV", version, flags, then where the tags start (DataOffset, 32 bits).
    private static let signature: [UInt8] = Array("FLV".utf8)
    private static let fileHeaderSize = 9, dataOffsetField = 5
    private static let tagHeaderSize = 11, previousTagSizeBytes = 4
    private static let audioTag: UInt8 = 8, videoTag: UInt8 = 9
    /// The tag type is the low 5 bits; bit 5 marks an encrypted (filtered) tag.
    private static let tagTypeMask: UInt8 = 0x1F, filterBit: UInt8 = 0x20
    // Video, legacy: FrameType << 4 | CodecID, then for AVC and codec 12 AVCPacketType and an SI24
    // composition time. Enhanced RTMP: IsExHeader | FrameType << 4 | PacketType, then a FourCC.
    private static let isExHeader: UInt8 = 0x80
    private static let keyFrame: UInt8 = 1, commandFrame: UInt8 = 5
    private static let avcCodecID: UInt8 = 7, hevcCodecID: UInt8 = 12
    private static let avcStyleHeaderSize = 5
    private enum ExPacket: UInt8 {
        case sequenceStart = 0, codedFrames, sequenceEnd, codedFramesX, metadata, mpeg2TSSequenceStart, multitrack, modEx
    }
    private static let exHeaderSize = 5, compositionTimeSize = 3
    /// Enhanced RTMP FourCCs and libavcodec's names; only avc1 and hvc1 carry a composition time.
    private static let fourCCs = ["hvc1": "hevc", "avc1": "h264", "av01": "av1", "vp09": "vp9"]
    private static let fourCCsWithCompositionTime: Set<String> = ["hvc1", "avc1"]
    // Audio: SoundFormat << 4 | rate, size and channel flags; AAC adds AACPacketType.
    private static let aacSoundFormat: UInt8 = 10, aacHeaderSize = 2

    /// Checks the FLV header; the tags follow from `next()`.
    init(_ bytes: Data) throws {
        self.bytes = bytes
        let base = bytes.startIndex
        guard bytes.count >= Self.fileHeaderSize, bytes.prefix(Self.signature.count).elementsEqual(Self.signature) else {
            throw Unreadable(description: "no FLV signature")
        }
        offset = base + Self.bigEndian(bytes, at: base + Self.dataOffsetField, count: 4) + Self.previousTagSizeBytes
    }

    /// The next tag; nil at the end of the file, or where it ends inside a tag (`truncatedAt`).
    mutating func next() throws -> Tag? {
        let end = bytes.endIndex
        guard offset + Self.tagHeaderSize <= end else {
            if offset < end { truncatedAt = offset - bytes.startIndex }
            return nil
        }
        let at = offset
        let size = Self.bigEndian(bytes, at: at + 1, count: 3)
        let bodyStart = at + Self.tagHeaderSize, bodyEnd = bodyStart + size
        guard bodyEnd <= end else {
            truncatedAt = at - bytes.startIndex
            return nil
        }
        // The PreviousTagSize after the body may be missing at the very end.
        offset = min(bodyEnd + Self.previousTagSizeBytes, end)
        let type = bytes[at] & Self.tagTypeMask
        let position = at - bytes.startIndex
        guard bytes[at] & Self.filterBit == 0 else {
            throw Unreadable(description: "the tag at byte \(position) is encrypted")
        }
        // 24 bits, then the extension byte above them.
        let timestamp = Int64(Self.bigEndian(bytes, at: at + 4, count: 3) | Int(bytes[at + 7]) << 24)
        let body = bodyStart..<bodyEnd
        switch type {
        case Self.videoTag where !body.isEmpty:
            return try video(body, timestamp: timestamp, position: position)
        case Self.audioTag where !body.isEmpty:
            return try audio(body, timestamp: timestamp, position: position)
        default:
            let kind: Tag.Kind = type == Self.audioTag ? .audio : type == Self.videoTag ? .video : .script
            return Tag(kind: kind, role: .other, isEnhanced: false, isKeyframe: false, codec: nil, signalling: nil,
                       timestamp: timestamp, position: position, payload: body)
        }
    }

    private func video(_ body: Range<Int>, timestamp: Int64, position: Int) throws -> Tag {
        let first = bytes[body.lowerBound]
        let enhanced = first & Self.isExHeader != 0
        let frameType = enhanced ? (first >> 4) & 0x7 : first >> 4
        let isCommand = frameType == Self.commandFrame
        func tag(_ role: Tag.Role, _ codec: String?, _ signalling: String, headerSize: Int) throws -> Tag {
            guard body.count >= headerSize else {
                throw Unreadable(description: "the video tag at byte \(position) (\(signalling)) is shorter than its header")
            }
            return Tag(kind: .video, role: role, isEnhanced: enhanced, isKeyframe: role == .frame && frameType == Self.keyFrame,
                       codec: codec, signalling: signalling, timestamp: timestamp, position: position,
                       payload: (body.lowerBound + headerSize)..<body.upperBound)
        }
        if enhanced {
            guard body.count >= Self.exHeaderSize else {
                throw Unreadable(description: "the video tag at byte \(position) (Enhanced RTMP) is shorter than its header")
            }
            let fourCC = String(decoding: bytes[(body.lowerBound + 1)..<(body.lowerBound + Self.exHeaderSize)], as: UTF8.self)
            let codec = Self.fourCCs[fourCC], signalling = "FourCC \(fourCC)"
            switch ExPacket(rawValue: first & 0x0F) {
            case .sequenceStart?:
                return try tag(.sequenceStart, codec, signalling, headerSize: Self.exHeaderSize)
            case let packet? where packet == .codedFrames || packet == .codedFramesX:
                let withTime = packet == .codedFrames && Self.fourCCsWithCompositionTime.contains(fourCC)
                return try tag(isCommand ? .other : .frame, codec, signalling,
                               headerSize: Self.exHeaderSize + (withTime ? Self.compositionTimeSize : 0))
            case .sequenceEnd?, .metadata?, .mpeg2TSSequenceStart?:
                return try tag(.other, codec, signalling, headerSize: Self.exHeaderSize)
            default:
                throw Unreadable(description: "the video tag at byte \(position) uses Enhanced RTMP packet type \(first & 0x0F)"
                                 + " (multitrack or later), which livemux report does not read")
            }
        }
        let codecID = first & 0x0F
        let signalling = "FLV codec id \(codecID)"
        guard codecID == Self.avcCodecID || codecID == Self.hevcCodecID else { return try tag(.frame, nil, signalling, headerSize: 1) }
        let codec = codecID == Self.hevcCodecID ? "hevc" : "h264"
        if isCommand { return try tag(.other, codec, signalling, headerSize: 1) }
        // AVCPacketType: 0 configuration, 1 NAL units, 2 end of sequence.
        let packetType = body.count > 1 ? bytes[body.lowerBound + 1] : nil
        let role: Tag.Role = packetType.flatMap { [0: .sequenceStart, 1: .frame][$0] } ?? .other
        return try tag(role, codec, signalling, headerSize: Self.avcStyleHeaderSize)
    }

    private func audio(_ body: Range<Int>, timestamp: Int64, position: Int) throws -> Tag {
        let format = bytes[body.lowerBound] >> 4
        let signalling = "FLV SoundFormat \(format)"
        guard format == Self.aacSoundFormat else {
            return Tag(kind: .audio, role: .frame, isEnhanced: false, isKeyframe: true, codec: nil, signalling: signalling,
                       timestamp: timestamp, position: position, payload: (body.lowerBound + 1)..<body.upperBound)
        }
        guard body.count >= Self.aacHeaderSize else {
            throw Unreadable(description: "the AAC tag at byte \(position) is shorter than its header")
        }
        // AACPacketType: 0 AudioSpecificConfig, 1 a raw frame; every audio frame is a keyframe.
        let role: Tag.Role = [0: .sequenceStart, 1: .frame][bytes[body.lowerBound + 1]] ?? .other
        return Tag(kind: .audio, role: role, isEnhanced: false, isKeyframe: role == .frame, codec: "aac", signalling: signalling,
                   timestamp: timestamp, position: position, payload: (body.lowerBound + Self.aacHeaderSize)..<body.upperBound)
    }

    /// `count` bytes at `at` as a big-endian number.
    private static func bigEndian(_ bytes: Data, at: Int, count: Int) -> Int {
        bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
    }
}
