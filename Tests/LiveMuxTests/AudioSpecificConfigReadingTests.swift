import XCTest
@testable import LiveMux

/// Reading an AudioSpecificConfig back: what `make` writes, and the escapes it never writes.
final class AudioSpecificConfigReadingTests: XCTestCase {
    func testReadsWhatMakeWrites() throws {
        for (rate, channels) in [(48000, 2), (44100, 1), (8000, 6), (96000, 8)] {
            let config = try XCTUnwrap(AudioSpecificConfig.make(sampleRate: rate, channels: channels))
            let read = try XCTUnwrap(AudioSpecificConfig.read(config))
            XCTAssertEqual(read.sampleRate, rate)
            XCTAssertEqual(read.channels, channels)
        }
    }

    /// Object type 31 takes 6 more bits; frequency index 15 is followed by the rate in 24 bits.
    func testEscapesAndShortConfigs() throws {
        // 11111 000001 (type 32) 1111 (explicit) 000000001011101110000000 (48000) 0010 (stereo)
        let bits = "11111" + "000001" + "1111" + "000000001011101110000000" + "0010"
        let padded = bits + String(repeating: "0", count: (8 - bits.count % 8) % 8)
        let bytes = stride(from: 0, to: padded.count, by: 8).map { i -> UInt8 in
            UInt8(padded.dropFirst(i).prefix(8), radix: 2)!
        }
        let read = try XCTUnwrap(AudioSpecificConfig.read(bytes))
        XCTAssertEqual(read.sampleRate, 48000)
        XCTAssertEqual(read.channels, 2)
        XCTAssertNil(AudioSpecificConfig.read([0x11]))
        XCTAssertNil(AudioSpecificConfig.read([]))
        XCTAssertNil(AudioSpecificConfig.read([0x16, 0x90]), "frequency index 13 is reserved")
    }
}
