import XCTest
import FFmpeg
@testable import LiveMux

/// The audio mix's placement of a second source against the first (`AudioMixer`,
/// `AudioSourceInput`), with frames made by libavfilter and stamped by hand.
final class AudioMixerTests: XCTestCase {
    override func setUp() { FFmpegLog.setLevel(.quiet) }

    static let format = AudioFormat(sampleRate: 48000, channels: 2)
    static let frameSamples = 960, frameMicroseconds: Int64 = 20_000
    static let inputArguments = "sample_rate=48000:sample_fmt=fltp:channel_layout=stereo:time_base=1/48000"

    /// `count` frames of 20 ms at a constant level (`aevalsrc`): a source whose every sample is
    /// known.
    static func constantFrames(_ level: Double, count: Int) throws -> [Frame] {
        let graph = try FilterGraph(description: "aevalsrc=exprs=\(level)|\(level):sample_rate=48000:nb_samples=\(frameSamples)"
                                    + ":duration=\(Double(count * frameSamples) / 48000),aformat=sample_fmts=fltp[out]")
        var frames: [Frame] = []
        let frame = try Frame()
        while try graph.read(into: frame) != nil { frames.append(try frame.reference()) }
        return frames
    }

    /// Takes the mix's frames and counts those with a step in them (a 1 kHz high-pass peaks at a
    /// step of the level and is 0 on a constant one): with a first source of silence and a second
    /// at 0.25 throughout, a step is a hole the mix left in the second. The first frames, where
    /// the level starts, are not counted.
    final class HoleCounter: FrameConsumer, @unchecked Sendable {
        private let detector: ProcessingGraph
        private let marks: Frame
        var frames = 0, withHoles = 0
        static let starting = 2, step = 0.05

        init() throws {
            detector = try ProcessingGraph(description: "[m]highpass=f=1000[z]",
                                           inputs: [.init(label: "m", mediaType: .audio, arguments: AudioMixerTests.inputArguments)],
                                           output: "z")
            marks = try Frame()
        }

        func consume(_ frame: Frame, at time: Int64, capturedAt wallTime: Int64) throws -> Bool {
            frames += 1
            try detector.send(frame, to: 0)
            while case .value = try detector.receive(into: marks) {
                if frames > Self.starting && marks.peakAmplitude > Self.step { withHoles += 1 }
            }
            return true
        }

        func finish() throws {}
        var isDone: Bool { false }
    }

    /// The first source's stamps wander ±3 ms around its sample count (as pulse's do) while the
    /// second's samples are all there: the mix takes the second sample after sample, so no frame
    /// has a hole. Taken at each stamp, every frame stamped earlier than the one before began with
    /// 6 ms of silence.
    func testTheSecondSourceIsTakenAtTheMixClockNotAtTheFirstSourcesStamps() throws {
        let count = 50
        let second = try AudioSourceInput(label: "a1", format: Self.format, live: false)
        for (k, frame) in try Self.constantFrames(0.25, count: count + 2).enumerated() {
            _ = try second.consume(frame, at: Int64(k) * Self.frameMicroseconds, capturedAt: 0)
        }
        let counter = try HoleCounter()
        let inputs = (0..<2).map { ProcessingGraph.Input(label: "a\($0)", mediaType: .audio, arguments: Self.inputArguments) }
        let graph = try ProcessingGraph(description: "[a0][a1]amix=inputs=2:normalize=0:duration=first:dropout_transition=0[aout]",
                                        inputs: inputs, output: "aout")
        let mixer = try AudioMixer(encoder: counter, format: Self.format, inputs: [second], graph: graph, live: false)
        for k in 0..<count {
            let wander: Int64 = k % 2 == 0 ? 3000 : -3000
            let silence = try Frame.silence(samples: Self.frameSamples, format: .floatPlanar, sampleRate: 48000, channels: 2)
            _ = try mixer.consume(silence, at: Int64(k) * Self.frameMicroseconds + wander, capturedAt: 0)
        }
        try second.finish()
        XCTAssertGreaterThan(counter.frames, count - 3)
        XCTAssertEqual(counter.withHoles, 0, "mixed frames with a hole in the second source, of \(counter.frames)")
    }

    /// A second source whose clock runs 150 ppm slow against its stamps (each 20 ms frame stamped
    /// 20.003 ms after the one before), for 160 s: its samples are stretched to its stamps a
    /// little each second, so no frame of the mix has a hole. Placed frame after frame until the
    /// drift passed 20 ms, it got 20 ms of silence there instead.
    func testASecondSourceWhoseClockDriftsIsStretchedNotCut() throws {
        let count = 8000, ahead = 3, slowFrameMicroseconds: Int64 = 20_003
        let second = try AudioSourceInput(label: "a1", format: Self.format, live: false)
        let frames = try Self.constantFrames(0.25, count: count + ahead + 50)
        let counter = try HoleCounter()
        let inputs = (0..<2).map { ProcessingGraph.Input(label: "a\($0)", mediaType: .audio, arguments: Self.inputArguments) }
        let graph = try ProcessingGraph(description: "[a0][a1]amix=inputs=2:normalize=0:duration=first:dropout_transition=0[aout]",
                                        inputs: inputs, output: "aout")
        let mixer = try AudioMixer(encoder: counter, format: Self.format, inputs: [second], graph: graph, live: false)
        var fed = 0
        for k in 0..<count {
            // The second source a few frames ahead of the first, as far as its stamps say.
            while fed < frames.count && Int64(fed) * slowFrameMicroseconds <= Int64(k + ahead) * Self.frameMicroseconds {
                _ = try second.consume(frames[fed], at: Int64(fed) * slowFrameMicroseconds, capturedAt: 0)
                fed += 1
            }
            let silence = try Frame.silence(samples: Self.frameSamples, format: .floatPlanar, sampleRate: 48000, channels: 2)
            _ = try mixer.consume(silence, at: Int64(k) * Self.frameMicroseconds, capturedAt: 0)
        }
        try second.finish()
        XCTAssertGreaterThan(counter.frames, count - 3)
        XCTAssertEqual(counter.withHoles, 0, "mixed frames with a hole in the second source, of \(counter.frames)")
    }

    /// A live source found late at its deadline is waited for once; the next take does not wait
    /// for it again until it has caught up (one that is away is filled 200 ms behind the clock, so
    /// waiting at every frame made the mix fall that far behind); once its samples are there the
    /// mix waits for it again.
    func testALateSourceIsNotWaitedForAgainUntilItCatchesUp() throws {
        let source = try AudioSourceInput(label: "a1", format: Self.format, live: true)
        let frames = try Self.constantFrames(0.25, count: 2)
        _ = try source.consume(frames[0], at: 0, capturedAt: 0)
        let wait: Int64 = 40_000
        func take(at time: Int64) throws -> Double {
            let start = Timestamp.monotonicMicroseconds()
            _ = try source.take(at: time, count: Self.frameSamples, deadline: start + wait)
            return Double(Timestamp.monotonicMicroseconds() - start) / 1000
        }
        XCTAssertLessThan(try take(at: 0), 20, "its samples are there")
        XCTAssertGreaterThanOrEqual(try take(at: 20_000), 39, "late: waited for until the deadline")
        XCTAssertLessThan(try take(at: 40_000), 20, "still late: not waited for again")
        _ = try source.consume(frames[1], at: 60_000, capturedAt: 0)
        XCTAssertLessThan(try take(at: 60_000), 20, "caught up")
        XCTAssertGreaterThanOrEqual(try take(at: 80_000), 39, "waited for again")
    }
}
