import CFFmpeg

/// Converts audio between sample formats, rates and channel layouts (libswresample).
public final class Resampler: @unchecked Sendable {
    private var context: OpaquePointer?
    public let outputRate: Int
    public let outputChannels: Int
    public let outputFormat: SampleFormat

    public init(inputRate: Int, inputChannels: Int, inputFormat: Int32,
                outputRate: Int, outputChannels: Int, outputFormat: SampleFormat) throws {
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
