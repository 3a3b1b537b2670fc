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

    /// True when every parameter set an avcC or hvcC record declares lies inside it. FFmpeg 5.1's
    /// `hevc_mp4toannexb` trusts the counts: a 48-byte record claiming 224 arrays of 57,568 units
    /// made it reallocate 12.9 million times (35 s, found by the fuzzer), so records are checked first.
    static func isWellFormedRecord(_ r: [UInt8], hevc: Bool) -> Bool {
        var i = hevc ? 23 : 6
        func units(_ count: Int) -> Bool {
            for _ in 0..<count {
                guard i + 2 <= r.count else { return false }
                let n = Int(r[i]) << 8 | Int(r[i + 1])
                guard n > 0, i + 2 + n <= r.count else { return false }
                i += 2 + n
            }
            return true
        }
        if hevc {
            guard r.count >= 23 else { return false }
            for _ in 0..<Int(r[22]) {
                guard i + 3 <= r.count else { return false }
                let count = Int(r[i + 1]) << 8 | Int(r[i + 2])
                i += 3
                guard units(count) else { return false }
            }
            return true
        }
        guard r.count >= 6, units(Int(r[5] & 0x1f)) else { return false }
        // The PPS count byte may be missing from a record that ends after its SPS.
        guard i < r.count else { return true }
        let pps = Int(r[i])
        i += 1
        return units(pps)
    }

    /// The NAL length size an avcC (byte 4) or hvcC (byte 21) record declares.
    static func lengthSize(ofRecord record: [UInt8], hevc: Bool) -> Int {
        let at = hevc ? 21 : 4
        return record.count > at ? Int(record[at] & 3) + 1 : 4
    }
}
