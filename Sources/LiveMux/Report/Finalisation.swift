import Foundation

/// Whether an ASF or FLV recording was finished: its muxer's trailer seeks back and writes the
/// duration, sizes and (ASF) packet count into the header, and ASF appends its index. A recording
/// cut off before that (SIGKILL, a power loss) keeps the placeholders of its header, so players
/// show no duration and cannot seek. Pure: the file's bytes in, what is missing out.
public struct Finalisation: Sendable, Equatable {
    /// The container, told by its signature (not by the name).
    public let format: ContainerFormat
    /// What shows the trailer was never written, one phrase each; empty for a finished file.
    let missing: [String]
    /// Written as a stream (stdout, a pipe): such a muxer never goes back to write the end, so
    /// the file is unfinished by design rather than cut off.
    let wasStreamed: Bool

    public var isFinalised: Bool { missing.isEmpty }

    /// An FLV whose every tag is whole but which has no onMetaData at all: not cut off, but
    /// written by a muxer that leaves it out (nginx-rtmp's recordings).
    var lacksOnlyMetadata: Bool { missing == [Self.noMetadata] }
    private static let noMetadata = "no onMetaData, so no duration"

    /// Reads the file's header (mapped, not copied); nil when it is not ASF or FLV, or cannot be read.
    public static func read(_ path: String) -> Finalisation? {
        guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return nil }
        return Finalisation(bytes)
    }

    /// Nil when the bytes are neither ASF nor FLV.
    init?(_ bytes: Data) {
        let bytes = bytes.startIndex == 0 ? bytes : Data(bytes)
        if bytes.starts(with: Self.asfHeaderGUID) {
            format = .asf
            (missing, wasStreamed) = Self.asfMissing(bytes)
        } else if bytes.count >= Self.flvFileHeaderSize, bytes.starts(with: Self.flvSignature) {
            format = .flv
            (missing, wasStreamed) = Self.flvMissing(bytes)
        } else {
            return nil
        }
    }

    // MARK: ASF

    // GUIDs as they lie in the file (the first three fields little-endian).
    private static let asfHeaderGUID: [UInt8] = [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C]
    private static let asfFilePropertiesGUID: [UInt8] = [0xA1, 0xDC, 0xAB, 0x8C, 0x47, 0xA9, 0xCF, 0x11, 0x8E, 0xE4, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65]
    private static let asfSimpleIndexGUID: [UInt8] = [0x90, 0x08, 0x00, 0x33, 0xB1, 0xE5, 0xCF, 0x11, 0x89, 0xF4, 0x00, 0xA0, 0xC9, 0x03, 0x49, 0xCB]
    /// An object: GUID, then its size (64 bits) including these 24 bytes.
    private static let asfObjectHeaderSize = 24
    /// The header object adds its sub-object count (32 bits) and two reserved bytes.
    private static let asfHeaderObjectSize = 30
    // File Properties, from the object's start: file size, then after the creation date the data
    // packet count and play duration (64 bits each, the duration in 100 ns), and the preroll (ms).
    private static let asfFileSizeField = 40, asfPacketCountField = 56, asfPlayDurationField = 64, asfPrerollField = 80
    private static let asfHundredNanosecondsPerMillisecond: UInt64 = 10_000
    private static let asfFilePropertiesSize = 104
    /// The flags (32 bits): bit 0 is set in a broadcast, which FFmpeg writes to a pipe.
    private static let asfFlagsField = 88, asfBroadcastFlag: UInt64 = 1

    private static func asfMissing(_ bytes: Data) -> (missing: [String], streamed: Bool) {
        guard bytes.count >= asfHeaderObjectSize else { return (["its header is cut off"], false) }
        let headerEnd = Int(clamping: littleEndian(bytes, at: 16, count: 8))
        guard headerEnd >= asfHeaderObjectSize, headerEnd <= bytes.count else { return (["its header is cut off"], false) }
        var at = asfHeaderObjectSize
        var properties: Int?
        while at + asfObjectHeaderSize <= headerEnd {
            let size = Int(clamping: littleEndian(bytes, at: at + 16, count: 8))
            if bytes[at..<(at + 16)].elementsEqual(asfFilePropertiesGUID) { properties = at }
            guard size >= asfObjectHeaderSize else { break }
            at += size
        }
        guard let p = properties, p + asfFilePropertiesSize <= headerEnd else { return (["its header has no file properties"], false) }
        var missing: [String] = []
        // The play duration counts the preroll, so an unfinished header states just the preroll.
        let preroll = littleEndian(bytes, at: p + asfPrerollField, count: 8)
        let played = littleEndian(bytes, at: p + asfPlayDurationField, count: 8)
        if played <= preroll.multipliedReportingOverflow(by: asfHundredNanosecondsPerMillisecond).partialValue { missing.append("no duration") }
        if littleEndian(bytes, at: p + asfPacketCountField, count: 8) == 0 { missing.append("no packet count") }
        let stated = littleEndian(bytes, at: p + asfFileSizeField, count: 8)
        if stated != UInt64(bytes.count) { missing.append("a file size of \(stated) bytes where the file has \(bytes.count)") }
        // An audio-only ASF has no index even when finished (FFmpeg indexes video keyframes), so a
        // missing index is told only beside a header the trailer never wrote.
        if !missing.isEmpty && !hasASFIndex(bytes, after: headerEnd) { missing.append("no index") }
        return (missing, littleEndian(bytes, at: p + asfFlagsField, count: 4) & asfBroadcastFlag != 0)
    }

    /// Whether a Simple Index object follows the data object that starts at `dataStart`.
    private static func hasASFIndex(_ bytes: Data, after dataStart: Int) -> Bool {
        guard dataStart + asfObjectHeaderSize <= bytes.count else { return false }
        let dataSize = Int(clamping: littleEndian(bytes, at: dataStart + 16, count: 8))
        let (indexStart, overflow) = dataStart.addingReportingOverflow(dataSize)
        guard !overflow, dataSize >= asfObjectHeaderSize, indexStart + 16 <= bytes.count else { return false }
        return bytes[indexStart..<(indexStart + 16)].elementsEqual(asfSimpleIndexGUID)
    }

    private static func littleEndian(_ bytes: Data, at: Int, count: Int) -> UInt64 {
        bytes[at..<(at + count)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    // MARK: FLV

    private static let flvSignature: [UInt8] = Array("FLV".utf8)
    private static let flvFileHeaderSize = 9, flvDataOffsetField = 5
    private static let flvTagHeaderSize = 11, flvPreviousTagSizeBytes = 4
    private static let flvScriptTag: UInt8 = 18, flvTagTypeMask: UInt8 = 0x1F
    // AMF0 types of what onMetaData holds.
    private static let amfNumber: UInt8 = 0, amfBoolean: UInt8 = 1, amfString: UInt8 = 2, amfECMAArray: UInt8 = 8

    private static func flvMissing(_ bytes: Data) -> (missing: [String], streamed: Bool) {
        var missing: [String] = []
        var at = Int(bigEndian(bytes, at: flvDataOffsetField, count: 4)) + flvPreviousTagSizeBytes
        var metadata: [String: Double]?
        var first = true
        // Every tag, as far as the file goes: a file cut inside a tag was never finished either.
        while at < bytes.count {
            guard at + flvTagHeaderSize <= bytes.count else {
                missing.append("cut off inside the tag at byte \(at)")
                break
            }
            let size = Int(bigEndian(bytes, at: at + 1, count: 3))
            let end = at + flvTagHeaderSize + size
            guard end + flvPreviousTagSizeBytes <= bytes.count else {
                missing.append("cut off inside the tag at byte \(at)")
                break
            }
            if bigEndian(bytes, at: end, count: 4) != UInt64(flvTagHeaderSize + size) {
                missing.append("a tag size that does not match its tag at byte \(at)")
                break
            }
            if first, bytes[at] & flvTagTypeMask == flvScriptTag {
                metadata = onMetaDataNumbers(bytes[(at + flvTagHeaderSize)..<end])
            }
            first = false
            at = end + flvPreviousTagSizeBytes
        }
        let duration = metadata?["duration"] ?? 0
        if duration <= 0 { missing.insert(metadata == nil ? noMetadata : "no duration", at: 0) }
        if let stated = metadata?["filesize"], stated != Double(bytes.count) {
            missing.insert("a file size of \(Int64(stated)) bytes where the file has \(bytes.count)", at: min(1, missing.count))
        }
        // A streaming muxer leaves both out (flvflags=no_duration_filesize); a file's writes them as 0.
        return (missing, metadata.map { $0["duration"] == nil && $0["filesize"] == nil } ?? false)
    }

    /// The numbers of an onMetaData script tag by name (duration, filesize…); nil when the tag is
    /// not onMetaData. Stops at the first value it cannot step over: the ones FFmpeg and
    /// `FLVTagWriter` write (numbers, booleans, strings) all come first.
    private static func onMetaDataNumbers(_ body: Data) -> [String: Double]? {
        var at = body.startIndex
        let end = body.endIndex
        func string() -> String? {
            guard at + 2 <= end else { return nil }
            let length = Int(bigEndian(body, at: at, count: 2))
            guard at + 2 + length <= end else { return nil }
            defer { at += 2 + length }
            return String(decoding: body[(at + 2)..<(at + 2 + length)], as: UTF8.self)
        }
        guard at < end, body[at] == amfString else { return nil }
        at += 1
        guard string() == "onMetaData", at + 5 <= end, body[at] == amfECMAArray else { return nil }
        at += 5  // the type and the array's count, which writers do not always keep true
        var numbers: [String: Double] = [:]
        while let name = string(), !name.isEmpty, at < end {
            let type = body[at]
            at += 1
            switch type {
            case amfNumber:
                guard at + 8 <= end else { return numbers }
                numbers[name] = Double(bitPattern: bigEndian(body, at: at, count: 8))
                at += 8
            case amfBoolean: at += 1
            case amfString: guard string() != nil else { return numbers }
            default: return numbers
            }
        }
        return numbers
    }

    private static func bigEndian(_ bytes: Data, at: Int, count: Int) -> UInt64 {
        bytes[at..<(at + count)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
