import XCTest
@testable import LiveMux

final class HEVCConfigurationRecordTests: XCTestCase {
    var vps: [UInt8] { Self.vps }
    var sps: [UInt8] { Self.sps }
    var pps: [UInt8] { Self.pps }
    var sei: [UInt8] { Self.sei }
    // A 320x240 libx265 (Main, level 2) stream's parameter sets.
    static let vps: [UInt8] = hex("40010c01ffff01600000030090000003000003003fba0240")
    static let sps: [UInt8] = hex("42010101600000030090000003000003003fa00a080f165ba924cae68080000003008000000f04")
    static let pps: [UInt8] = hex("4401c172b46240")
    static let sei: [UInt8] = hex("4e0105ffffe72ca2de09b51747db80")

    /// The 23 fixed bytes FFmpeg 5.1's own builder (`ff_isom_write_hvcc`, through the MP4
    /// muxer) wrote for these parameter sets, but for numOfArrays: FFmpeg also stores the SEI.
    func testRecordMatchesFFmpegsForTheSameParameterSets() throws {
        let annexB = [0, 0, 0, 1] + vps + [0, 0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0, 0, 1] + sei
        let record = try HEVCConfigurationRecord.make(fromAnnexB: annexB)
        XCTAssertEqual(Array(record.prefix(22)), hex("0101600000009000000000003ff000fcfdf8f800000f"))
        XCTAssertEqual(record[22], 3, "VPS, SPS and PPS; the SEI is left out")
        var expected: [UInt8] = Array(record.prefix(23))
        for (type, unit) in [(32, vps), (33, sps), (34, pps)] {
            expected += [UInt8(type), 0, 1, UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit
        }
        XCTAssertEqual(record, expected)
        XCTAssertTrue(AnnexB.isWellFormedRecord(record, hevc: true))
        XCTAssertEqual(AnnexB.lengthSize(ofRecord: record, hevc: true), 4)
        XCTAssertEqual(try HEVCConfigurationRecord.make(fromAnnexB: record), record, "a record stays as it is")
    }

    func testMissingOrTruncatedParameterSetsAreRefused() {
        XCTAssertThrowsError(try HEVCConfigurationRecord.make(fromAnnexB: [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps))
        XCTAssertThrowsError(try HEVCConfigurationRecord.make(fromAnnexB: [0, 0, 0, 1] + vps + [0, 0, 0, 1] + Array(sps.prefix(16))
                                                              + [0, 0, 0, 1] + pps)) { error in
            XCTAssertTrue("\(error)".contains("SPS ends too early"), "\(error)")
        }
        XCTAssertThrowsError(try HEVCConfigurationRecord.make(fromAnnexB: []))
    }

    func testRBSPReaderDropsEmulationPreventionAndReadsExpGolomb() throws {
        // Header byte, then 00 00 03 01: the 03 is emulation prevention.
        var r = RBSPReader(nalUnit: [0xAA, 0x00, 0x00, 0x03, 0x01, 0b1010_0110, 0b0100_0000], headerBytes: 1)
        XCTAssertEqual(try r.bits(24), 0x000001)
        // 1 → 0; 010 → 1; 011 → 2; 00100 → 3.
        XCTAssertEqual(try r.unsignedExpGolomb(), 0)
        XCTAssertEqual(try r.unsignedExpGolomb(), 1)
        XCTAssertEqual(try r.unsignedExpGolomb(), 2)
        XCTAssertEqual(try r.unsignedExpGolomb(), 3)
        XCTAssertThrowsError(try r.bits(8), "past the end")
    }

    func testAnnexBSplitsOnBothStartCodesAndConvertsToLengths() {
        let bytes: [UInt8] = [0, 0, 0, 1, 0x40, 0x01, 0, 0, 1, 0x42, 0x02, 0x03, 0, 0, 0, 0, 1, 0x26, 0x00, 0x01]
        XCTAssertEqual(AnnexB.nalUnitRanges(bytes).map { Array(bytes[$0]) }, [[0x40, 0x01], [0x42, 0x02, 0x03], [0x26, 0x00, 0x01]],
                       "trailing zeros before a start code are not part of the unit")
        var out: [UInt8] = []
        AnnexB.appendLengthPrefixed(annexB: bytes, to: &out)
        XCTAssertEqual(out, [0, 0, 0, 2, 0x40, 0x01, 0, 0, 0, 3, 0x42, 0x02, 0x03, 0, 0, 0, 3, 0x26, 0x00, 0x01])
        XCTAssertEqual(AnnexB.fromLengthPrefixed(out), [0, 0, 0, 1, 0x40, 0x01, 0, 0, 0, 1, 0x42, 0x02, 0x03, 0, 0, 0, 1, 0x26, 0x00, 0x01])
    }

    /// Parameter sets come from outside (`Muxer`, `mux`): damaged ones are refused, never a trap.
    func testDamagedParameterSetsAreRefusedOrBuilt() {
        let units = [vps, sps, pps]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var annexB: [UInt8] = []
            for unit in units {
                var u = unit
                for _ in 0..<Int.random(in: 0...4, using: &generator) { u[Int.random(in: 2..<u.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
                annexB += [0, 0, 0, 1] + u.prefix(Int.random(in: 2...u.count, using: &generator))
            }
            if let record = try? HEVCConfigurationRecord.make(fromAnnexB: annexB) {
                XCTAssertTrue(AnnexB.isWellFormedRecord(record, hevc: true))
            }
        }
    }
}

private func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var i = s.startIndex
    while i < s.endIndex {
        let j = s.index(i, offsetBy: 2)
        out.append(UInt8(s[i..<j], radix: 16)!)
        i = j
    }
    return out
}
