/// Byte-level facts about H.264/HEVC access units that need no parsing of the syntax: which
/// packaging a buffer uses, and converting length-prefixed NAL units to start codes.
enum AnnexB {
    static let startCode: [UInt8] = [0, 0, 0, 1]

    /// True when `bytes` begin with a start code (00 00 01 or 00 00 00 01).
    static func hasStartCode(_ bytes: [UInt8]) -> Bool {
        if bytes.count >= 3, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 { return true }
        return bytes.count >= 4 && bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 1
    }

    /// True when `bytes` read as length-prefixed NAL units (AVCC/HVCC, `lengthSize` bytes
    /// big-endian each) whose lengths tile the buffer exactly: the check that tells AVCC from
    /// garbage. Reads only the lengths.
    static func isLengthPrefixed(_ bytes: [UInt8], lengthSize: Int = 4) -> Bool {
        guard (1...4).contains(lengthSize), !bytes.isEmpty else { return false }
        var i = 0
        while i < bytes.count {
            guard i + lengthSize <= bytes.count else { return false }
            var n = 0
            for k in 0..<lengthSize { n = n << 8 | Int(bytes[i + k]) }
            i += lengthSize
            guard n > 0, n <= bytes.count - i else { return false }
            i += n
        }
        return true
    }

    /// Length-prefixed NAL units rewritten with start codes; nil unless `isLengthPrefixed`.
    static func fromLengthPrefixed(_ bytes: [UInt8], lengthSize: Int = 4) -> [UInt8]? {
        guard isLengthPrefixed(bytes, lengthSize: lengthSize) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var i = 0
        while i < bytes.count {
            var n = 0
            for k in 0..<lengthSize { n = n << 8 | Int(bytes[i + k]) }
            i += lengthSize
            out += startCode
            out += bytes[i..<(i + n)]
            i += n
        }
        return out
    }

    /// The NAL length size an avcC (byte 4) or hvcC (byte 21) record declares.
    static func lengthSize(ofRecord record: [UInt8], hevc: Bool) -> Int {
        let at = hevc ? 21 : 4
        return record.count > at ? Int(record[at] & 3) + 1 : 4
    }
}
