import Foundation
import FFmpeg

/// The frame rate an H.264 or HEVC elementary stream states in its parameter sets' timing info,
/// found by libavcodec's parser. An elementary stream has no timestamps: without this, its frames
/// are timed at a rate the user gives or a guess.
enum ElementaryFrameRate {
    /// How much of the file is read: the first access unit (parameter sets and the first slice
    /// header) is all the parser needs, and it lies well within this.
    static let probeBytes = 1 << 20

    /// The rate the stream at `path` states; nil when its parameter sets carry no timing info,
    /// or when none are found in the first `probeBytes`.
    static func read(_ path: String, hevc: Bool) -> Rational? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard let bytes = try? file.read(upToCount: probeBytes), !bytes.isEmpty,
              let parser = try? Parser(hevc: hevc) else { return nil }
        // One buffer, taken as one access unit: the parser reads the parameter sets and stops at
        // the first slice header, where it sets the rate.
        return parser.parse([UInt8](bytes))?.frameRate
    }
}
