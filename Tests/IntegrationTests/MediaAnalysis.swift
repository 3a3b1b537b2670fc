import Foundation
import XCTest

/// Reads a recording's samples and pixels back with ffmpeg: a tone's amplitude over windows
/// (Goertzel), a frame's pixels.
enum MediaAnalysis {
    /// The audio decoded to mono 32-bit float at `rate` (ffmpeg averages the channels).
    static func samples(_ path: String, rate: Int = 48000) throws -> [Float] {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-vn", "-ac", "1", "-ar", String(rate),
                                         "-f", "f32le", "-acodec", "pcm_f32le", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The amplitude of a sine at `frequency` in `samples` (Goertzel; 1.0 is full scale).
    static func amplitude(of frequency: Double, in samples: ArraySlice<Float>, rate: Int = 48000) -> Double {
        let k = 2 * cos(2 * Double.pi * frequency / Double(rate))
        var (s1, s2) = (0.0, 0.0)
        for x in samples {
            let s0 = Double(x) + k * s1 - s2
            (s2, s1) = (s1, s0)
        }
        let power = s1 * s1 + s2 * s2 - k * s1 * s2
        return 2 * sqrt(max(0, power)) / Double(samples.count)
    }

    /// The tone's amplitude in consecutive windows of `window` seconds.
    static func amplitudes(of frequency: Double, in samples: [Float], window: Double, rate: Int = 48000) -> [Double] {
        let n = Int(window * Double(rate))
        return stride(from: 0, to: samples.count - n + 1, by: n).map { amplitude(of: frequency, in: samples[$0..<$0 + n], rate: rate) }
    }

    /// One frame at `time` (s) as packed RGB bytes, with its size.
    static func frame(_ path: String, at time: Double) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        let probe = try Tools.probe(path)
        let video = try XCTUnwrap(probe.streams.first { $0.codec_type == "video" })
        let (width, height) = (try XCTUnwrap(video.width), try XCTUnwrap(video.height))
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-ss", String(time), "-i", path, "-frames:v", "1",
                                         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.count, width * height * 3)
        return (width, height, [UInt8](r.stdout))
    }

    /// The pixel at (x, y) in every frame, in order: one ffmpeg run for the whole file.
    static func pixelTrack(_ path: String, _ x: Int, _ y: Int) throws -> [(r: Int, g: Int, b: Int)] {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-an", "-vf", "crop=2:2:\(x):\(y),scale=1:1",
                                         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let bytes = [UInt8](r.stdout)
        return stride(from: 0, to: bytes.count - 2, by: 3).map { (Int(bytes[$0]), Int(bytes[$0 + 1]), Int(bytes[$0 + 2])) }
    }

    /// The pixel at (x, y).
    static func pixel(_ f: (width: Int, height: Int, rgb: [UInt8]), _ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = (y * f.width + x) * 3
        return (Int(f.rgb[i]), Int(f.rgb[i + 1]), Int(f.rgb[i + 2]))
    }
}
