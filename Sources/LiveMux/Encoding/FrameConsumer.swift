import Foundation
import FFmpeg

/// What a capture thread hands its frames to: an encoder, directly or on a thread of its own.
protocol FrameConsumer: AnyObject, Sendable {
    /// Takes one frame captured at `time` (µs on the capture clock); false once it wants no more.
    func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool
    /// Flushes and ends the stream. Called once, after the last `consume`.
    func finish() throws
    /// True once it wants no more frames.
    var isDone: Bool { get }
}
