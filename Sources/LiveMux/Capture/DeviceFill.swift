import FFmpeg

/// What keeps a live device's streams going while it is away, so the timeline and A/V sync hold:
/// silence after its last audio sample, its last video frame repeated on the frame grid. Audio is
/// stamped from its sample count, so an unfilled gap would move every later sample early by the
/// gap. When the device is back, what it delivers over time already filled is cut off (a reopened
/// pulse stream stamps its first packets up to a buffer before they arrive).
/// Used by its capture thread only.
struct DeviceFill {
    private var audioShape: (rate: Int, channels: Int, format: SampleFormat)?
    /// Where the silence being filled starts (µs) and how many samples of it went out.
    private var silenceStart: Int64 = 0, silenceSamples: Int64 = 0
    /// The capture time (µs) just after the last audio sample handed on.
    private var audioEnd: Int64?
    private var lastVideo: Frame?
    /// The last real video frame's time and how many repeats of it went out.
    private var videoTime: Int64?, repeats = 0
    /// The video frame period (µs).
    let videoPeriod: Double
    /// True from a fill of silence until an audio frame of the device comes after it.
    private var afterGap = false
    /// Silence samples (at the device's rate) and repeated frames filled in so far.
    private(set) var filledSamples: Int64 = 0, filledFrames = 0
    /// Silence goes out in frames of this many samples (an AAC frame's).
    static let chunk = Int64(CodecParameters.aacFrameSamples)

    init(framesPerSecond: Double) { videoPeriod = framesPerSecond > 0 ? 1_000_000 / framesPerSecond : 0 }

    /// Seconds of silence filled in so far.
    var filledSeconds: Double { audioShape.map { Double(filledSamples) / Double($0.rate) } ?? 0 }

    /// A frame of the device is handed on: what a later gap repeats or follows.
    mutating func delivered(audio frame: Frame, at time: Int64) {
        guard frame.sampleRate > 0 else { return }
        audioShape = (frame.sampleRate, frame.channelCount, SampleFormat(rawValue: frame.format))
        audioEnd = time + Int64(frame.sampleCount) * 1_000_000 / Int64(frame.sampleRate)
    }

    mutating func delivered(video frame: Frame, at time: Int64) throws {
        lastVideo = try frame.reference()
        (videoTime, repeats) = (time, 0)
    }

    /// The part of an audio frame after what was filled (and its time); nil when all of it was.
    mutating func admit(audio frame: Frame, at time: Int64) throws -> (Frame, Int64)? {
        guard afterGap, let end = audioEnd, frame.sampleRate > 0 else { return (frame, time) }
        if time >= end {
            afterGap = false
            return (frame, time)
        }
        let overlap = Int((end - time) * Int64(frame.sampleRate) / 1_000_000)
        if overlap >= frame.sampleCount { return nil }
        afterGap = false
        return overlap > 0 ? (try frame.droppingSamples(overlap), end) : (frame, time)
    }

    /// Fills both streams up to `time` (µs on the capture clock): audio to it, video every slot
    /// before the one `time` falls in. False once the encoders want no more.
    mutating func fill(upTo time: Int64, audio: FrameConsumer?, video: FrameConsumer?) throws -> Bool {
        if let audio, let shape = audioShape, let end = audioEnd, end < time {
            if !afterGap { (silenceStart, silenceSamples) = (end, 0) }
            afterGap = true
            let rate = Int64(shape.rate)
            while true {
                let at = silenceStart + silenceSamples * 1_000_000 / rate
                let samples = min(Self.chunk, (time - at) * rate / 1_000_000)
                guard samples > 0 else { break }
                let silence = try Frame.silence(samples: Int(samples), format: shape.format, sampleRate: shape.rate, channels: shape.channels)
                guard try audio.consume(silence, at: at, capturedAt: at) else { return false }
                silenceSamples += samples
                filledSamples += samples
                audioEnd = silenceStart + silenceSamples * 1_000_000 / rate
            }
        }
        if let video, let frame = lastVideo, let last = videoTime, videoPeriod > 0 {
            while true {
                let at = Int64((Double(last) + Double(repeats + 1) * videoPeriod).rounded())
                guard Double(at) + videoPeriod / 2 < Double(time) else { break }
                guard try video.consume(frame, at: at, capturedAt: at) else { return false }
                repeats += 1
                filledFrames += 1
            }
        }
        return true
    }
}
