import CFFmpeg

/// The codec parameters of a stream, copied out of libavformat or an encoder (`AVCodecParameters`).
public final class CodecParameters: @unchecked Sendable {
    // Immutable after creation, so sharing it between threads is safe.
    let pointer: UnsafeMutablePointer<AVCodecParameters>

    init() throws {
        guard let p = avcodec_parameters_alloc() else { throw outOfMemory("avcodec_parameters_alloc") }
        pointer = p
    }

    convenience init(copying source: UnsafePointer<AVCodecParameters>) throws {
        try self.init()
        try check(avcodec_parameters_copy(pointer, source), "avcodec_parameters_copy")
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecParameters>? = pointer
        avcodec_parameters_free(&p)
    }

    /// A copy that says `bitRate` (a later header's, after the encoder's rate changed).
    public func with(bitRate: Int) throws -> CodecParameters {
        let copy = try CodecParameters(copying: pointer)
        copy.pointer.pointee.bit_rate = Int64(bitRate)
        return copy
    }

    public var mediaType: MediaType { MediaType(pointer.pointee.codec_type) }
    public var codecName: String { String(cString: avcodec_get_name(pointer.pointee.codec_id)) }
    public var width: Int { Int(pointer.pointee.width) }
    public var height: Int { Int(pointer.pointee.height) }
    public var sampleRate: Int { Int(pointer.pointee.sample_rate) }
    public var channelCount: Int { Int(pointer.pointee.ch_layout.nb_channels) }
    /// How many frames a decoder holds back for reordering (`video_delay`: B-frames); 0 when unknown.
    public var videoDelay: Int { Int(pointer.pointee.video_delay) }
    /// Bits per second the encoder aimed at; 0 when unknown.
    public var bitRate: Int { Int(pointer.pointee.bit_rate) }
    public var isH264: Bool { pointer.pointee.codec_id == AV_CODEC_ID_H264 }
    public var isHEVC: Bool { pointer.pointee.codec_id == AV_CODEC_ID_HEVC }
    public var isAAC: Bool { pointer.pointee.codec_id == AV_CODEC_ID_AAC }
    /// True when libavformat named no codec for the stream (`AV_CODEC_ID_NONE`).
    public var isUnknownCodec: Bool { pointer.pointee.codec_id == AV_CODEC_ID_NONE }
    /// The container's tag for the codec (`codec_tag`: a FourCC, first character in the low byte); 0 when none.
    public var codecTag: UInt32 { pointer.pointee.codec_tag }
    public var extradata: [UInt8] {
        guard let d = pointer.pointee.extradata, pointer.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: d, count: Int(pointer.pointee.extradata_size)))
    }
}
