import CFFmpeg

/// Converts audio between sample formats, rates and channel layouts (libswresample).
public final class Resampler: @unchecked Sendable {
    private var context: OpaquePointer?
    public let outputRate: Int
    public let outputChannels: Int
    public let outputFormat: SampleFormat

    /// `compensates`: the resampler runs even between equal rates, so that `compensate` can
    /// stretch or squeeze the output from the first sample on, without a restart in the middle.
    public init(inputRate: Int, inputChannels: Int, inputFormat: Int32,
                outputRate: Int, outputChannels: Int, outputFormat: SampleFormat, compensates: Bool = false) throws {
        var inLayout = AVChannelLayout()
        var outLayout = AVChannelLayout()
        lm_default_channel_layout(&inLayout, Int32(inputChannels))
        lm_default_channel_layout(&outLayout, Int32(outputChannels))
        defer { av_channel_layout_uninit(&inLayout); av_channel_layout_uninit(&outLayout) }
        // Swift skips deinit when init throws before every property is set: free it here.
        do {
            try check(swr_alloc_set_opts2(&context, &outLayout, outputFormat.av, Int32(outputRate),
                                          &inLayout, AVSampleFormat(rawValue: inputFormat), Int32(inputRate), 0, nil),
                      "swr_alloc_set_opts2")
            if compensates { try check(av_opt_set_int(UnsafeMutableRawPointer(context), "flags", Int64(SWR_FLAG_RESAMPLE), 0), "av_opt_set_int") }
            try check(swr_init(context), "swr_init")
        } catch {
            swr_free(&context)
            throw error
        }
        self.outputRate = outputRate
        self.outputChannels = outputChannels
        self.outputFormat = outputFormat
    }

    deinit { swr_free(&context) }

    /// From now on, `samples` more (fewer, when negative) samples come out over the next
    /// `distance` output samples, spread evenly (`swr_set_compensation`, ffmpeg's soft
    /// compensation): a source's clock drift taken out without a cut. 0 ends a compensation.
    public func compensate(samples: Int, over distance: Int) throws {
        try check(swr_set_compensation(context, Int32(samples), Int32(distance)), "swr_set_compensation")
    }

    /// Samples (at the output rate) it holds back: its filter looks that far ahead.
    public var delay: Int { Int(swr_get_delay(context, Int64(outputRate))) }

    /// Converts `input` (or drains with `nil`) into a new frame; its sample count may differ.
    public func convert(_ input: Frame?) throws -> Frame? {
        let inSamples = input?.sampleCount ?? 0
        let capacity = Int(swr_get_out_samples(context, Int32(inSamples)))
        if capacity <= 0 { return nil }
        let out = try Frame.audio(samples: capacity, format: outputFormat, sampleRate: outputRate, channels: outputChannels)
        let produced: Int32 = try withUnsafePointer(to: &out.pointer.pointee.data) { od in
            let outData = UnsafeMutableRawPointer(mutating: od).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
            if let input {
                return try withUnsafePointer(to: &input.pointer.pointee.data) { id in
                    let inData = UnsafeMutableRawPointer(mutating: id).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
                    return try check(swr_convert(context, outData, Int32(capacity), inData, Int32(inSamples)), "swr_convert")
                }
            }
            return try check(swr_convert(context, outData, Int32(capacity), nil, 0), "swr_convert")
        }
        if produced == 0 { return nil }
        out.pointer.pointee.nb_samples = produced
        return out
    }
}
