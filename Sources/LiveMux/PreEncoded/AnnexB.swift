/// Byte-level facts about H.264/HEVC access units that need no parsing of the syntax: which
/// packaging a buffer uses, and converting length-prefixed NAL units to start codes.
enum AnnexB {
    static let startCode: [UInt8] = [0, 0, 0, 1]

    /// True when `bytes` begin with a start code (00 00 01 or 00 00 00 01).
    static func hasStartCode<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        let s = bytes.startIndex
        if bytes.count >= 3, bytes[s] == 0, bytes[s + 1] == 0, bytes[s + 2] == 1 { return true }
        return bytes.count >= 4 && bytes[s] == 0 && bytes[s + 1] == 0 && bytes[s + 2] == 0 && bytes[s + 3] == 1
    }

    /// True when `bytes` read as length-prefixed NAL units (AVCC/HVCC, `lengthSize` bytes
    /// big-endian each) whose lengths tile the buffer exactly: the check that tells AVCC from
    /// garbage. Reads only the lengths.
    static func isLengthPrefixed<Bytes: RandomAccessCollection>(_ bytes: Bytes, lengthSize: Int = 4) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var valid = !bytes.isEmpty && (1...4).contains(lengthSize)
        if valid { forEachLengthPrefixedUnit(bytes, lengthSize: lengthSize) { _ in } onInvalid: { valid = false } }
        return valid
    }

    /// True when `bytes` begin with a start code and are not also a valid length-prefixed buffer:
    /// `00 00 01` also begins a 4-byte length of 256…511, so a buffer whose lengths tile it exactly
    /// is length-prefixed; only `00 00 00 01` is unambiguous (no 1-byte NAL unit exists).
    static func isAnnexB<Bytes: RandomAccessCollection>(_ bytes: Bytes, lengthSize: Int) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        hasStartCode(bytes) && (bytes[bytes.startIndex + 2] == 0 || !isLengthPrefixed(bytes, lengthSize: lengthSize))
    }

    /// True when a length-prefixed buffer holds a parameter set (H.264 SPS/PPS; HEVC VPS/SPS/PPS).
    /// Reads one header byte per NAL unit, so it is cheap enough for every keyframe.
    static func containsParameterSets<Bytes: RandomAccessCollection>(lengthPrefixed bytes: Bytes, lengthSize: Int, hevc: Bool) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var found = false
        forEachLengthPrefixedUnit(bytes, lengthSize: lengthSize) { unit in
            let type = hevc ? Int(bytes[unit.lowerBound] >> 1) & 0x3F : Int(bytes[unit.lowerBound]) & 0x1F
            if hevc ? (32...34).contains(type) : (type == 7 || type == 8) { found = true }
        } onInvalid: {}
        return found
    }

    /// The range of each NAL unit in Annex B `bytes`, without start codes or the zero bytes
    /// before the next start code (trailing_zero_8bits).
    static func nalUnitRanges<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> [Range<Int>]
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var ranges: [Range<Int>] = []
        var start: Int? = nil
        var i = bytes.startIndex
        func close(at end: Int) {
            guard let s = start else { return }
            var e = end
            while e > s && bytes[e - 1] == 0 { e -= 1 }
            if e > s { ranges.append(s..<e) }
        }
        while i + 2 < bytes.endIndex {
            if bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1 {
                close(at: i)
                start = i + 3
                i += 3
            } else {
                // A start code needs two zeros: after a byte above 1, skip ahead by three.
                i += bytes[i + 2] > 1 ? 3 : 1
            }
        }
        close(at: bytes.endIndex)
        return ranges
    }

    /// Annex B NAL units rewritten as 4-byte length-prefixed ones (what FLV and MP4 store),
    /// appended to `out`.
    static func appendLengthPrefixed<Bytes: RandomAccessCollection>(annexB bytes: Bytes, to out: inout [UInt8])
    where Bytes.Element == UInt8, Bytes.Index == Int {
        for unit in nalUnitRanges(bytes) {
            let n = unit.count
            out += [UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            out += bytes[unit]
        }
    }

    /// Length-prefixed NAL units rewritten with start codes; nil unless `isLengthPrefixed`.
    static func fromLengthPrefixed<Bytes: RandomAccessCollection>(_ bytes: Bytes, lengthSize: Int = 4) -> [UInt8]?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        guard isLengthPrefixed(bytes, lengthSize: lengthSize) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        forEachLengthPrefixedUnit(bytes, lengthSize: lengthSize) { unit in
            out += startCode
            out += bytes[unit]
        } onInvalid: {}
        return out
    }

    /// Rewrites 4-byte length-prefixed NAL units as Annex B in place: each length becomes the
    /// 4-byte start code, so nothing moves. The caller has checked `isLengthPrefixed`.
    static func replaceLengthsWithStartCodes(_ bytes: UnsafeMutableRawBufferPointer) {
        var i = 0
        while i + 4 <= bytes.count {
            let n = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            bytes[i] = 0
            bytes[i + 1] = 0
            bytes[i + 2] = 0
            bytes[i + 3] = 1
            guard n > 0 else { return }
            i += 4 + n
        }
    }

    /// Calls `body` with the range of each NAL unit's payload, or `onInvalid` (and stops) at a
    /// length of zero or one that runs past the end.
    private static func forEachLengthPrefixedUnit<Bytes: RandomAccessCollection>(
        _ bytes: Bytes, lengthSize: Int, _ body: (Range<Int>) -> Void, onInvalid: () -> Void
    ) where Bytes.Element == UInt8, Bytes.Index == Int {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            guard i + lengthSize <= bytes.endIndex else { return onInvalid() }
            var n = 0
            for k in 0..<lengthSize { n = n << 8 | Int(bytes[i + k]) }
            i += lengthSize
            guard n > 0, n <= bytes.endIndex - i else { return onInvalid() }
            body(i..<(i + n))
            i += n
        }
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
