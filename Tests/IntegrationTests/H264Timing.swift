import Foundation

/// Makes test streams that x264 cannot: an H.264 Annex B stream whose SPS carries no VUI timing
/// info. x264 always writes it and h264_metadata can only change it, so each SPS is rewritten
/// here with timing_info_present_flag cleared and its 65 bits of timing taken out. Handles the
/// SPS x264 writes (no scaling matrices, POC type 0 or 2).
enum H264Timing {
    /// The stream with timing removed from every SPS; nil if an SPS is not one this can read.
    static func strip(_ stream: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        for nal in units(stream) {
            out += [0, 0, 0, 1]
            if nal.first.map({ $0 & 0x1F }) == 7 {
                guard let sps = stripSPS(Array(nal)) else { return nil }
                out += sps
            } else {
                out += nal
            }
        }
        return out
    }

    /// The NAL units between start codes.
    private static func units(_ b: [UInt8]) -> [ArraySlice<UInt8>] {
        var starts: [Int] = []  // first byte after each start code
        var i = 0
        while i + 2 < b.count {
            if b[i] == 0, b[i + 1] == 0, b[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        return starts.enumerated().map { n, s in
            var end = n + 1 < starts.count ? starts[n + 1] - 3 : b.count
            while end > s, b[end - 1] == 0 { end -= 1 }  // a 4-byte start code's leading zero
            return b[s..<end]
        }
    }

    private static func stripSPS(_ nal: [UInt8]) -> [UInt8]? {
        // RBSP bits, without emulation prevention bytes.
        var rbsp: [UInt8] = []
        var zeros = 0
        for byte in nal.dropFirst() {
            if zeros >= 2, byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            rbsp.append(byte)
        }
        var bits = rbsp.flatMap { byte in (0..<8).reversed().map { (byte >> $0) & 1 } }
        var r = Reader(bits: bits)
        let profile = r.u(8)
        r.skip(16)  // constraint flags, level
        _ = r.ue()  // seq_parameter_set_id
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            if r.ue() == 3 { r.skip(1) }
            _ = r.ue(); _ = r.ue()  // bit depths
            r.skip(1)
            if r.u(1) == 1 { return nil }  // scaling matrices
        }
        _ = r.ue()  // log2_max_frame_num_minus4
        switch r.ue() {
        case 0: _ = r.ue()
        case 2: break
        default: return nil
        }
        _ = r.ue(); r.skip(1)  // max_num_ref_frames, gaps
        _ = r.ue(); _ = r.ue()  // size in macroblocks
        if r.u(1) == 0 { r.skip(1) }  // frame_mbs_only, mb_adaptive
        r.skip(1)  // direct_8x8_inference
        if r.u(1) == 1 { for _ in 0..<4 { _ = r.ue() } }  // cropping
        guard r.u(1) == 1 else { return nil }  // VUI
        if r.u(1) == 1, r.u(8) == 255 { r.skip(32) }  // aspect ratio
        if r.u(1) == 1 { r.skip(1) }  // overscan
        if r.u(1) == 1 { r.skip(4); if r.u(1) == 1 { r.skip(24) } }  // video signal type
        if r.u(1) == 1 { _ = r.ue(); _ = r.ue() }  // chroma location
        let flag = r.position
        guard r.u(1) == 1, !r.overran else { return nil }
        bits.replaceSubrange(flag..<(flag + 1 + 65), with: [0])
        // The RBSP still ends with its stop bit; pad to a byte again.
        while let last = bits.last, last == 0 { bits.removeLast() }
        while bits.count % 8 != 0 { bits.append(0) }
        let bytes = stride(from: 0, to: bits.count, by: 8).map { i in bits[i..<(i + 8)].reduce(0) { $0 << 1 | $1 } }
        var escaped: [UInt8] = [nal[0]]
        zeros = 0
        for byte in bytes {
            if zeros >= 2, byte <= 3 { escaped.append(3); zeros = 0 }
            zeros = byte == 0 ? zeros + 1 : 0
            escaped.append(byte)
        }
        return escaped
    }

    /// Reads bits MSB first: fixed-width fields and unsigned exp-Golomb codes.
    private struct Reader {
        let bits: [UInt8]
        var position = 0
        var overran: Bool { position > bits.count }

        mutating func u(_ n: Int) -> Int {
            var v = 0
            for _ in 0..<n {
                v = v << 1 | Int(position < bits.count ? bits[position] : 0)
                position += 1
            }
            return v
        }

        mutating func skip(_ n: Int) { position += n }

        mutating func ue() -> Int {
            var zeros = 0
            while position < bits.count, bits[position] == 0 { zeros += 1; position += 1 }
            position += 1
            return (1 << zeros) - 1 + u(zeros)
        }
    }
}
