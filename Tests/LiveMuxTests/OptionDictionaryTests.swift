import XCTest
@testable import FFmpeg

/// An option a muxer does not take is reported, as an encoder's is (issue 27): before, the ASF and
/// FLV muxers' leftovers went unnoticed.
final class OptionDictionaryTests: XCTestCase {
    func header(_ format: String, _ options: [(String, String)]) throws {
        let container = try OutputContainer(formatName: format, seekable: false, options: options)
        _ = try container.addStream(try CodecParameters.aac(sampleRate: 48000, channels: 2, extradata: [0x11, 0x90]),
                                    timeBase: Rational(1, 48000))
        _ = try container.writeHeader()
    }

    func testAMuxerOptionNobodyTakesIsAnError() throws {
        XCTAssertNoThrow(try header("asf", [("packet_size", "1400")]))
        XCTAssertNoThrow(try header("flv", [("flvflags", "no_duration_filesize")]))
        for format in ["asf", "flv"] {
            XCTAssertThrowsError(try header(format, [("no_such_option", "1")])) { error in
                XCTAssertTrue("\(error)".contains("unknown option 'no_such_option'"), "\(error)")
            }
        }
    }
}
