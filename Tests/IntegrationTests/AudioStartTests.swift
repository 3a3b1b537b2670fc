import Foundation
import XCTest

/// Audio whose first sample comes after the timeline's zero (issue 32, item 4) keeps its place
/// behind silence from zero: the stream covers the recording from its start, sample-accurately.
/// A file whose audio starts 0.5 s after its video shows it without devices.
final class AudioStartTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws { dir = try Tools.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    static let audioStart = 0.5
    static let seconds = 2.0

    func testAudioThatStartsLateIsPrecededBySilence() throws {
        let input = "\(dir!)/late.mkv", path = "\(dir!)/late.flv"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=3",
                                            "-itsoffset", String(Self.audioStart), "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=3",
                                            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "pcm_s16le", input])
        XCTAssertEqual(made.status, 0, made.stderr)
        let r = try Tools.livemux(["record", "-q", "-t", String(Self.seconds), "--no-realtime", "--input", input, "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
        let audio = try DeviceFailureTests.audioPackets(path)
        XCTAssertEqual(audio.first, 0, "first audio packet (ms)")
        XCTAssertEqual(Double(audio.count) * 1024 / 48000, Self.seconds, accuracy: 1024.0 / 48000, "audio duration")
        // The tone starts where it was, to the millisecond, with silence before it.
        let onsets = try SyncAnalysis.beepOnsets(path, rate: 48000)
        XCTAssertEqual(onsets.count, 1, "\(onsets)")
        XCTAssertEqual(onsets.first ?? 0, Self.audioStart, accuracy: 0.001, "the tone's onset (s)")
        let levels = try Self.levels(path)
        let before = levels.prefix(Int(Self.audioStart / Self.window) - 1)
        XCTAssertEqual(before.max() ?? .infinity, 0, accuracy: 1, "silence before the audio")
    }

    static let window = 0.01

    /// The RMS level of the recording's audio (mono, 48 kHz) in every 10 ms from the first packet.
    static func levels(_ path: String) throws -> [Double] {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-vn", "-ac", "1", "-ar", "48000",
                                         "-f", "s16le", "-acodec", "pcm_s16le", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let samples: [Int16] = r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let size = Int(48000 * window)
        return stride(from: 0, to: samples.count - size + 1, by: size).map { start in
            (samples[start..<start + size].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(size)).squareRoot()
        }
    }
}
