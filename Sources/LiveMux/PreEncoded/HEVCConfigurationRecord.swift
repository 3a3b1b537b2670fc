/// The HEVCDecoderConfigurationRecord (`hvcC`, ISO 14496-15 8.3.3.1) that FLV's HEVC sequence
/// header carries, built from Annex B parameter sets. FFmpeg's builder (`ff_isom_write_hvcc`) is
/// private to libavformat, so this is a small one of our own: profile, tier, level, chroma format
/// and bit depths from the SPS; no VUI parsing, so `min_spatial_segmentation_idc` and
/// `parallelismType` are 0 ("unknown"), as FFmpeg writes them when the VUI gives no limit.
enum HEVCConfigurationRecord {
    static let vps = 32, sps = 33, pps = 34

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// The record for Annex B `parameterSets` (VPS, SPS and PPS; other NAL units are left out),
    /// with 4-byte NAL lengths. An `hvcC` record (first byte 1) is returned as it is.
    static func make(fromAnnexB parameterSets: [UInt8]) throws -> [UInt8] {
        if parameterSets.first == 1 { return parameterSets }
        let units = AnnexB.nalUnitRanges(parameterSets).map { parameterSets[$0] }
        func ofType(_ t: Int) -> [ArraySlice<UInt8>] { units.filter { $0.count >= 2 && Int($0.first! >> 1) & 0x3F == t } }
        let arrays = [vps, sps, pps].map { ($0, ofType($0)) }
        guard arrays.allSatisfy({ !$0.1.isEmpty }) else {
            throw Invalid(description: "HEVC parameter sets lack a VPS, SPS or PPS: no hvcC record can be made")
        }
        // The record's counts and lengths are 16 bits.
        guard arrays.allSatisfy({ $0.1.count <= 0xFFFF && $0.1.allSatisfy { $0.count <= 0xFFFF } }) else {
            throw Invalid(description: "an HEVC parameter set is over 65535 bytes: no hvcC record can hold it")
        }
        var record = try header(fromSPS: arrays[1].1[0])
        record.append(UInt8(arrays.count))
        for (type, sets) in arrays {
            // array_completeness 0: the stream repeats its parameter sets in-band too.
            record.append(UInt8(type))
            record += [UInt8(sets.count >> 8), UInt8(sets.count & 0xFF)]
            for s in sets {
                record += [UInt8(s.count >> 8), UInt8(s.count & 0xFF)]
                record += s
            }
        }
        return record
    }

    /// The record's 22 fixed bytes, before numOfArrays.
    private static func header(fromSPS sps: ArraySlice<UInt8>) throws -> [UInt8] {
        var r = RBSPReader(nalUnit: sps, headerBytes: 2)
        do {
            try r.skip(4)  // sps_video_parameter_set_id
            let maxSubLayersMinus1 = Int(try r.bits(3))
            let temporalIdNested = try r.bits(1)
            // general_profile_tier_level: 2+1+5 bits, 32 compatibility flags, 48 constraint
            // flags, 8 bits level: 12 bytes the record copies as they are.
            var record: [UInt8] = [1]
            for _ in 0..<12 { record.append(UInt8(try r.bits(8))) }
            var subLayerProfile: [Bool] = [], subLayerLevel: [Bool] = []
            for _ in 0..<maxSubLayersMinus1 {
                subLayerProfile.append(try r.flag())
                subLayerLevel.append(try r.flag())
            }
            if maxSubLayersMinus1 > 0 { try r.skip(2 * (8 - maxSubLayersMinus1)) }
            for i in 0..<maxSubLayersMinus1 {
                if subLayerProfile[i] { try r.skip(88) }
                if subLayerLevel[i] { try r.skip(8) }
            }
            _ = try r.unsignedExpGolomb()  // sps_seq_parameter_set_id
            let chromaFormat = try r.unsignedExpGolomb()
            if chromaFormat == 3 { try r.skip(1) }  // separate_colour_plane_flag
            _ = try r.unsignedExpGolomb()  // pic_width_in_luma_samples
            _ = try r.unsignedExpGolomb()  // pic_height_in_luma_samples
            if try r.flag() { for _ in 0..<4 { _ = try r.unsignedExpGolomb() } }  // conformance window
            let lumaDepth = try r.unsignedExpGolomb(), chromaDepth = try r.unsignedExpGolomb()
            guard chromaFormat <= 3, lumaDepth <= 7, chromaDepth <= 7 else {
                throw Invalid(description: "HEVC SPS has chroma format \(chromaFormat), bit depths \(lumaDepth + 8)/\(chromaDepth + 8)")
            }
            record += [0xF0, 0x00,  // reserved, min_spatial_segmentation_idc 0
                       0xFC,  // reserved, parallelismType 0
                       0xFC | UInt8(chromaFormat), 0xF8 | UInt8(lumaDepth), 0xF8 | UInt8(chromaDepth),
                       0, 0,  // avgFrameRate: unspecified
                       // constantFrameRate 0, numTemporalLayers, temporalIdNested, lengthSizeMinusOne 3
                       UInt8(maxSubLayersMinus1 + 1) << 3 | UInt8(temporalIdNested) << 2 | 3]
            return record
        } catch is RBSPReader.Truncated {
            throw Invalid(description: "HEVC SPS ends too early: no hvcC record can be made")
        }
    }
}
