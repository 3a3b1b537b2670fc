import CFFmpeg

/// What kind of media a stream carries.
public enum MediaType: Sendable, Equatable {
    case video, audio, other

    init(_ t: AVMediaType) {
        switch t {
        case AVMEDIA_TYPE_VIDEO: self = .video
        case AVMEDIA_TYPE_AUDIO: self = .audio
        default: self = .other
        }
    }
}

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
    public var extradata: [UInt8] {
        guard let d = pointer.pointee.extradata, pointer.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: d, count: Int(pointer.pointee.extradata_size)))
    }
}

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
    /// Samples of priming the audio encoder adds before the first input sample.
    public var initialPadding: Int { Int(context.pointee.initial_padding) }
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

public final class Decoder: CodecContext, @unchecked Sendable {
    /// Opens a decoder for a stream's parameters.
    public init(parameters: CodecParameters, timeBase: Rational) throws {
        guard let codec = avcodec_find_decoder(parameters.pointer.pointee.codec_id) else {
            throw FFmpegError(code: FFmpegError.posix(ENOSYS), function: "avcodec_find_decoder(\(parameters.codecName))")
        }
        try super.init(codec: codec)
        try check(avcodec_parameters_to_context(context, parameters.pointer), "avcodec_parameters_to_context")
        context.pointee.pkt_timebase = timeBase.av
        try check(avcodec_open2(context, codec, nil), "avcodec_open2(\(parameters.codecName) decoder)")
    }

    /// Sends one packet, or `nil` to drain.
    public func send(_ packet: Packet?) throws {
        let code = avcodec_send_packet(context, packet?.pointer)
        if code == FFmpegError.endOfFileCode { return }
        try check(code, "avcodec_send_packet")
    }

    public func receive(into frame: Frame) throws -> Received<Frame> {
        try received(avcodec_receive_frame(context, frame.pointer), frame, "avcodec_receive_frame")
    }
}

public final class Encoder: CodecContext, @unchecked Sendable {
    /// What to open: the same fields `ffmpeg -c:v libx264 -b:v … -g …` sets.
    public struct Settings: Sendable {
        public var codecName: String
        public var bitRate: Int
        public var timeBase: Rational
        // video
        public var width = 0
        public var height = 0
        public var pixelFormat = PixelFormat.yuv420p
        public var frameRate = Rational(0, 1)
        public var gopSize = 0
        public var maxBFrames = 0
        // audio
        public var sampleRate = 0
        public var channels = 0
        public var sampleFormat = SampleFormat.floatPlanar
        /// Put parameter sets in extradata (`AV_CODEC_FLAG_GLOBAL_HEADER`), as FLV and ASF need.
        public var globalHeader = true
        /// Private options of the codec (`preset`, `tune`, `x264-params`, …).
        public var options: [(String, String)] = []

        public init(codecName: String, bitRate: Int, timeBase: Rational) {
            self.codecName = codecName
            self.bitRate = bitRate
            self.timeBase = timeBase
        }
    }

    public init(_ s: Settings) throws {
        guard let codec = avcodec_find_encoder_by_name(s.codecName) else {
            throw FFmpegError(code: FFmpegError.posix(ENOSYS), function: "avcodec_find_encoder_by_name(\(s.codecName))")
        }
        try super.init(codec: codec)
        let c = context
        c.pointee.bit_rate = Int64(s.bitRate)
        c.pointee.time_base = s.timeBase.av
        if codec.pointee.type == AVMEDIA_TYPE_VIDEO {
            c.pointee.width = Int32(s.width)
            c.pointee.height = Int32(s.height)
            c.pointee.pix_fmt = s.pixelFormat.av
            c.pointee.framerate = s.frameRate.av
            c.pointee.gop_size = Int32(s.gopSize)
            c.pointee.max_b_frames = Int32(s.maxBFrames)
        } else {
            c.pointee.sample_rate = Int32(s.sampleRate)
            c.pointee.sample_fmt = s.sampleFormat.av
            lm_default_channel_layout(&c.pointee.ch_layout, Int32(s.channels))
        }
        if s.globalHeader { c.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var dict: OpaquePointer? = nil
        defer { av_dict_free(&dict) }
        for (k, v) in s.options { av_dict_set(&dict, k, v, 0) }
        try check(avcodec_open2(c, codec, &dict), "avcodec_open2(\(s.codecName))")
        if let leftover = av_dict_get(dict, "", nil, AV_DICT_IGNORE_SUFFIX) {
            throw FFmpegError(code: FFmpegError.posix(EINVAL),
                              function: "avcodec_open2(\(s.codecName)): unknown option '\(String(cString: leftover.pointee.key))'")
        }
    }

    /// Sends one frame, or `nil` to flush. The frame's picture type is cleared first: decoders
    /// mark every raw frame as I, and libx264 would obey that and make every frame a keyframe.
    public func send(_ frame: Frame?) throws {
        frame?.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        let code = avcodec_send_frame(context, frame?.pointer)
        if code == FFmpegError.endOfFileCode { return }
        try check(code, "avcodec_send_frame")
    }

    public func receive() throws -> Received<Packet> {
        let packet = try Packet()
        return try received(avcodec_receive_packet(context, packet.pointer), packet, "avcodec_receive_packet")
    }
}
