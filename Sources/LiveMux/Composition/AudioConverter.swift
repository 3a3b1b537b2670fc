import FFmpeg

/// Converts audio frames to one format (planar float at a rate and channel count) with
/// libswresample, made when the first frame that needs it arrives and again when the input
/// changes shape; a frame already in the format passes as it is. Used by one thread.
final class AudioConverter {
    let format: AudioFormat
    private var resampler: Resampler?
    private var input: (rate: Int, channels: Int, format: Int32)?

    init(to format: AudioFormat) { self.format = format }

    /// The frame in the format; nil while the resampler still holds what it was given.
    func convert(_ frame: Frame) throws -> Frame? {
        let shape = (frame.sampleRate, frame.channelCount, frame.format)
        if resampler == nil, frame.sampleRate == format.sampleRate, frame.channelCount == format.channels,
           frame.format == SampleFormat.floatPlanar.rawValue {
            return frame
        }
        if resampler == nil || input! != shape {
            resampler = try Resampler(inputRate: frame.sampleRate, inputChannels: frame.channelCount, inputFormat: frame.format,
                                      outputRate: format.sampleRate, outputChannels: format.channels, outputFormat: .floatPlanar)
            input = shape
        }
        return try resampler!.convert(frame)
    }

    /// What the resampler still holds, at the end.
    func flush() throws -> Frame? { try resampler?.convert(nil) }
}
