import Foundation
import XCTest
import FFmpeg
@testable import LiveMux

/// The AudioSpecificConfig built by hand against FFmpeg's own aac encoder.
final class AudioSpecificConfigTests: XCTestCase {
    func testEveryRateIndexAndChannelCountMatchesFFmpegsEncoder() throws {
        FFmpegLog.setLevel(.quiet)
        for rate in AudioSpecificConfig.sampleRates {
            for channels in [1, 2] {
                var s = Encoder.Settings(codecName: "aac", bitRate: 64000, timeBase: Rational(1, Int32(rate)))
                s.sampleRate = rate
                s.channels = channels
                let encoder = try Encoder(s)
                let written = Array(encoder.extradata.prefix(2))
                let ours = try XCTUnwrap(AudioSpecificConfig.make(sampleRate: rate, channels: channels))
                XCTAssertEqual(ours, written, "\(rate) Hz, \(channels) channel(s)")
            }
        }
    }

    func testRefusesRatesOutsideTheTable() {
        XCTAssertNil(AudioSpecificConfig.make(sampleRate: 44000, channels: 2))
        XCTAssertNil(AudioSpecificConfig.make(sampleRate: 48000, channels: 7))
    }

    func testADTSHeaderFields() throws {
        // 48 kHz (index 3), stereo, LC, frame length 371, no CRC.
        let h = try XCTUnwrap(ADTSHeader([0xFF, 0xF1, 0x4C, 0x80, 0x2E, 0x7F, 0xFC][...]))
        XCTAssertEqual(h.objectType, 2)
        XCTAssertEqual(h.sampleRate, 48000)
        XCTAssertEqual(h.channelConfiguration, 2)
        XCTAssertEqual(h.frameLength, 371)
        XCTAssertEqual(h.headerLength, 7)
        XCTAssertNil(ADTSHeader([0x00, 0xF1, 0x4C, 0x80, 0x2E, 0x7F, 0xFC][...]))
    }

    func testLengthPrefixedToAnnexB() {
        XCTAssertEqual(AnnexB.fromLengthPrefixed([0, 0, 0, 2, 0x65, 0x88, 0, 0, 0, 1, 0x41]),
                       [0, 0, 0, 1, 0x65, 0x88, 0, 0, 0, 1, 0x41])
        XCTAssertNil(AnnexB.fromLengthPrefixed([0, 0, 0, 9, 0x65]), "a length past the end is garbage")
        XCTAssertNil(AnnexB.fromLengthPrefixed([0, 0, 0, 0]), "a zero length is garbage")
    }
}
