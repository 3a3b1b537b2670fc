import FFmpeg

/// Converts audio frames to one format (planar float at a rate and channel count) with
/// libswresample, made when the first frame that needs it arrives and again when the input
/// changes shape; a frame already in the format passes as it is, unless the converter
/// `compensates` (a source of the mix whose clock may drift: every frame goes through the
/// resampler, which `compensate` stretches). Used by one thread.
final class AudioConverter {
    let format: AudioFormat
    private let compensates: Bool
    private var resampler: Resampler?
    private var input: (rate: Int, channels: Int, format: Int32)?

    init(to format: AudioFormat, compensates: Bool = false) {
        self.format = format
        self.compensates = compensates
    }

    /// The frame in the format; nil while the resampler still holds what it was given.
    func convert(_ frame: Frame) throws -> Frame? {
        let shape = (frame.sampleRate, frame.channelCount, frame.format)
        if resampler == nil, !compensates, frame.sampleRate == format.sampleRate, frame.channelCount == format.channels,
           frame.format == SampleFormat.floatPlanar.rawValue {
            return frame
        }
        if resampler == nil || input! != shape {
            resampler = try Resampler(inputRate: frame.sampleRate, inputChannels: frame.channelCount, inputFormat: frame.format,
                                      outputRate: format.sampleRate, outputChannels: format.channels, outputFormat: .floatPlanar,
                                      compensates: compensates)
            input = shape
        }
        return try resampler!.convert(frame)
    }

    /// Stretches (positive) or squeezes the next `distance` output samples by `samples`; nothing
    /// before the first frame.
    func compensate(samples: Int, over distance: Int) throws {
        try resampler?.compensate(samples: samples, over: distance)
    }

    /// Samples the resampler holds back (its look-ahead), at the output rate.
    var delay: Int { resampler?.delay ?? 0 }

    /// What the resampler still holds, at the end.
    func flush() throws -> Frame? { try resampler?.convert(nil) }
}
