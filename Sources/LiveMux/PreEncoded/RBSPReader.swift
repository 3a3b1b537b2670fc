/// Reads the bits of one H.264/HEVC NAL unit's payload (RBSP): fixed-width fields and
/// Exp-Golomb codes, with the emulation-prevention bytes (`00 00 03`) taken out first.
/// Reading past the end throws, so a truncated parameter set cannot be misread.
struct RBSPReader {
    struct Truncated: Error {}

    private let bytes: [UInt8]
    private var bit = 0

    /// `nalUnit` without its start code; `headerBytes` (2 for HEVC) are skipped.
    init<Bytes: Collection>(nalUnit: Bytes, headerBytes: Int) where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(nalUnit.count)
        var zeros = 0
        for b in nalUnit.dropFirst(headerBytes) {
            if zeros >= 2 && b == 3 {
                zeros = 0
                continue
            }
            zeros = b == 0 ? zeros + 1 : 0
            out.append(b)
        }
        bytes = out
    }

    /// `count` bits (at most 64), most significant first.
    mutating func bits(_ count: Int) throws -> UInt64 {
        guard bit + count <= bytes.count * 8 else { throw Truncated() }
        var v: UInt64 = 0
        for _ in 0..<count {
            v = v << 1 | UInt64(bytes[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
            bit += 1
        }
        return v
    }

    mutating func flag() throws -> Bool { try bits(1) == 1 }

    mutating func skip(_ count: Int) throws { _ = try bits(count) }

    /// ue(v): unsigned Exp-Golomb.
    mutating func unsignedExpGolomb() throws -> UInt64 {
        var leadingZeros = 0
        while try bits(1) == 0 {
            leadingZeros += 1
            guard leadingZeros < 32 else { throw Truncated() }
        }
        return (1 << UInt64(leadingZeros)) - 1 + (try bits(leadingZeros))
    }
}
