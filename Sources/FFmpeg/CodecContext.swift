import CFFmpeg

/// An open `AVCodecContext`, decoder or encoder. Used by one thread at a time.
public class CodecContext: @unchecked Sendable {
    let context: UnsafeMutablePointer<AVCodecContext>

    init(codec: UnsafePointer<AVCodec>) throws {
        guard let c = avcodec_alloc_context3(codec) else { throw outOfMemory("avcodec_alloc_context3") }
        context = c
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    public var timeBase: Rational { Rational(context.pointee.time_base) }
    public var width: Int { Int(context.pointee.width) }
    public var height: Int { Int(context.pointee.height) }
    public var pixelFormat: PixelFormat { PixelFormat(rawValue: context.pointee.pix_fmt.rawValue) }
    public var sampleFormat: SampleFormat { SampleFormat(rawValue: context.pointee.sample_fmt.rawValue) }
    public var sampleRate: Int { Int(context.pointee.sample_rate) }
    public var channelCount: Int { Int(context.pointee.ch_layout.nb_channels) }
    /// Samples per frame the audio encoder wants (0 when it takes any size).
    public var frameSize: Int { Int(context.pointee.frame_size) }
    public var extradata: [UInt8] {
        guard let d = context.pointee.extradata, context.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: d, count: Int(context.pointee.extradata_size)))
    }

    /// The stream parameters this codec produces (for an encoder) or consumes (for a decoder).
    public func parameters() throws -> CodecParameters {
        let p = try CodecParameters()
        try check(avcodec_parameters_from_context(p.pointer, context), "avcodec_parameters_from_context")
        return p
    }
}
