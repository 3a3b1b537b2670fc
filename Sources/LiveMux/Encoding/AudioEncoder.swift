import FFmpeg
import POSIX

/// Turns captured audio into AAC packets on the shared timeline: resamples with libswresample,
/// trims what was captured before the timeline's start sample-accurately (or, when its first
/// sample came after the start, puts silence before it from zero), collects whole encoder frames
/// in a FIFO, and stamps every frame from the running sample count, so no rate drifts by
/// rounding; each frame goes to every lane (one encode per bit rate the outputs ask for,
/// `EncodePlan`). Runs on its capture thread.
final class AudioEncoder: FrameConsumer, @unchecked Sendable {
    // Used by one capture thread only.
    let settings: AudioSettings
    /// The rate and channels encoded at; every source is resampled to them.
    let format: AudioFormat
    /// One per audio encode; each feeds its mux sessions until they are cancelled.
    private var lanes: [AudioLane]
    /// Lanes added while the job runs (the control API's new outputs), taken at the next frame.
    private let added = Locked([AudioLane]())
    /// Which of `lanes` still have a session that takes packets.
    private var open: [Bool]
    private let timeline: Timeline
    private let statistics: Statistics
    /// Every frame to `format`, planar float (libswresample where it needs converting).
    private let converter: AudioConverter
    private let fifo: AudioFIFO
    private let frameSize: Int
    private let sampleLimit: Int64?
    /// Timeline sample index of the FIFO's next sample to write; nil before the first kept sample.
    private var writeSample: Int64?
    /// Timeline sample index of the next frame the FIFO gives the encoder.
    private var readSample: Int64 = 0
    /// Frames captured before the timeline has a base, with their times.
    private var waiting: [(Frame, Int64, Int64)] = []
    private var captureTimes: [(sample: Int64, time: Int64)] = []
    private(set) var isDone = false
    private var lastCaptureTime: Int64 = 0
    private var lastInputStamp: Int64?
    private var gaveUpWaiting = false
    private var nextInputTime: Int64?

    init(settings: AudioSettings, format: AudioFormat, timeline: Timeline, lanes: [AudioLane], statistics: Statistics,
         duration: Double?) throws {
        precondition(!lanes.isEmpty, "at least one audio lane")
        self.settings = settings
        self.format = format
        converter = AudioConverter(to: format)
        self.lanes = lanes
        open = lanes.map { _ in true }
        frameSize = lanes[0].frameSize
        fifo = try AudioFIFO(format: .floatPlanar, channels: format.channels, sampleRate: format.sampleRate)
        self.timeline = timeline
        self.statistics = statistics
        // A duration shorter than a sample still records the first AAC frame.
        sampleLimit = duration.map { max(1, Int64(($0 * Double(format.sampleRate)).rounded())) }
    }

    /// Takes one captured frame (`time`: µs on the capture clock of its first sample). Returns
    /// false once the duration is reached.
    func consume(_ frame: Frame, at captureTime: Int64, capturedAt wallTime: Int64) throws -> Bool {
        guard !isDone else { return false }
        statistics.countInput(.audio)
        // A timestamp that repeats or goes backwards is repaired: the frame follows the previous one.
        // (Audio is stamped from the sample count anyway; capture times serve the start and the drift.)
        // Compared with the stamp before, not with the repaired time, so that stamps which went
        // back by more than a frame and go on from there are followed again, not repaired forever.
        var time = captureTime
        if let expected = nextInputTime, let last = lastInputStamp, time <= last {
            statistics.countTimestampRepair(.audio)
            time = expected
        }
        lastInputStamp = captureTime
        if frame.sampleRate > 0 {
            nextInputTime = time + Int64(frame.sampleCount) * 1_000_000 / Int64(frame.sampleRate)
        }
        let base: Int64
        if let known = timeline.origin {
            base = known
        } else if !timeline.videoSetsBase {
            base = timeline.establish(at: time)
        } else {
            // Video has not started yet: hold on to the audio, it may overlap the first frame.
            waiting.append((try frame.reference(), time, wallTime))
            if waiting.count > 500 {
                // Audio may run far ahead of a video source that is slow to start (a file or a
                // synthetic source read as fast as possible, on its own thread). Dropping the
                // oldest would lose the very samples around zero, so wait for video once, a while;
                // only a video source that never starts gets the oldest dropped.
                if !gaveUpWaiting, timeline.separateThreads, let base = timeline.waitForOrigin(upTo: 2) { return try appendWaiting(base: base) }
                gaveUpWaiting = true
                waiting.removeFirst()
                statistics.countDropped(.audio)
            }
            return true
        }
        guard try appendWaiting(base: base) else { return false }
        return try append(frame, at: time, base: base, capturedAt: wallTime)
    }

    /// Appends the frames held while the base was unknown; false once the duration is reached.
    private func appendWaiting(base: Int64) throws -> Bool {
        let held = waiting
        waiting = []
        for (f, t, w) in held where try !append(f, at: t, base: base, capturedAt: w) { return false }
        return true
    }

    private func append(_ frame: Frame, at time: Int64, base: Int64, capturedAt wallTime: Int64) throws -> Bool {
        lastCaptureTime = wallTime
        guard let converted = try converter.convert(frame) else { return try encodeReady() }
        // The first frame places the stream; every later sample follows it by count, before zero
        // too: a device's stamps may step further than its samples (a pulse monitor draining its
        // backlog stamps 20 ms of samples 40 ms apart), and placing the first frame past zero by
        // its own stamp left silence at the start.
        if writeSample == nil {
            let start = Timestamp.rescale(time - base, from: .microseconds, to: Rational(1, Int32(format.sampleRate)))
            // Audio that starts after zero keeps its place behind silence: the stream covers the
            // recording from its start, and every sample stays in sync.
            if start > 0 {
                captureTimes.append((0, wallTime))
                try writeSilence(min(start, sampleLimit ?? start))
            }
            writeSample = start
        }
        if writeSample! >= 0 {
            // Where this frame lands against when it was captured: the audio clock's drift.
            timeline.drift.audioObserved(timeline: Timestamp.rescale(writeSample!, from: Rational(1, Int32(format.sampleRate)), to: .microseconds),
                                         captured: time - base)
        }
        // Trim the part before the start of the timeline, and past the duration.
        let skip = Int(max(0, -writeSample!))
        var keep = converted.sampleCount - skip
        if let limit = sampleLimit { keep = Int(min(Int64(keep), limit - max(writeSample!, 0))) }
        if keep > 0 {
            captureTimes.append((max(writeSample!, 0), wallTime))
            try fifo.write(converted, from: skip, count: keep)
        } else if skip >= converted.sampleCount {
            statistics.countDropped(.audio)  // entirely before the start
        }
        writeSample! += Int64(converted.sampleCount)
        if let limit = sampleLimit, writeSample! >= limit {
            isDone = true
            return false
        }
        return try encodeReady()
    }

    /// Writes `count` samples of silence into the FIFO.
    private func writeSilence(_ count: Int64) throws {
        let silence = try Frame.silence(samples: frameSize, format: .floatPlanar, sampleRate: format.sampleRate, channels: format.channels)
        var left = count
        while left > 0 {
            let n = Int(min(left, Int64(frameSize)))
            try fifo.write(silence, from: 0, count: n)
            left -= Int64(n)
        }
    }

    /// Encodes every whole frame the FIFO holds.
    private func encodeReady(flushing: Bool = false) throws -> Bool {
        while fifo.count >= frameSize || (flushing && fifo.count > 0) {
            guard let frame = try fifo.read(samples: frameSize) else { break }
            frame.pts = readSample
            readSample += Int64(frame.sampleCount)
            if try !send(frame, promising: !flushing) { return false }
        }
        return true
    }

    func finish() throws {
        if !isDone, let tail = try converter.flush(), let start = writeSample {
            var keep = tail.sampleCount
            if let limit = sampleLimit { keep = Int(min(Int64(keep), limit - start)) }
            if keep > 0 { try fifo.write(tail, from: 0, count: keep) }
        }
        isDone = true
        _ = try encodeReady(flushing: true)
        _ = try send(nil, promising: false)
        lanes.forEach { $0.end() }
    }

    /// Adds a lane from any thread: it gets the frames from the next one on.
    func add(_ lane: AudioLane) { added.withLock { $0.append(lane) } }

    /// Sends a frame (nil: the flush) to every lane still open; false once none is.
    private func send(_ frame: Frame?, promising: Bool) throws -> Bool {
        let new = added.withLock { a in
            defer { a = [] }
            return a
        }
        lanes += new
        open += new.map { _ in true }
        for i in lanes.indices where open[i] {
            open[i] = try lanes[i].encode(frame, promising: promising, captured: captureTime(at:))
        }
        if !open.contains(true) {
            isDone = true
            return false
        }
        return true
    }

    /// When the samples at timeline index `sample` were captured: the packets of every lane come
    /// in the same order, so what lies before the first one asked for is no longer needed.
    private func captureTime(at sample: Int64) -> Int64 {
        while captureTimes.count > 1, captureTimes[1].sample <= sample { captureTimes.removeFirst() }
        return captureTimes.first?.time ?? lastCaptureTime
    }
}
