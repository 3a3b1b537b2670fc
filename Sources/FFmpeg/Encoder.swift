import CFFmpeg

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
        /// VBV: the peak rate and the buffer, in bits (0: none). libx264 changes its bit rate
        /// mid-stream only when VBV was on from the start (x264_encoder_reconfig).
        public var maxRate = 0
        public var bufferSize = 0
        // audio
        public var sampleRate = 0
        public var channels = 0
        public var sampleFormat = SampleFormat.floatPlanar
        /// Put parameter sets in extradata (`AV_CODEC_FLAG_GLOBAL_HEADER`), as FLV and ASF need.
        var globalHeader = true
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
            c.pointee.rc_max_rate = Int64(s.maxRate)
            c.pointee.rc_buffer_size = Int32(clamping: s.bufferSize)
        } else {
            c.pointee.sample_rate = Int32(s.sampleRate)
            c.pointee.sample_fmt = s.sampleFormat.av
            lm_default_channel_layout(&c.pointee.ch_layout, Int32(s.channels))
        }
        if s.globalHeader { c.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var dict = try OptionDictionary(s.options)
        try check(avcodec_open2(c, codec, &dict.raw), "avcodec_open2(\(s.codecName))")
        if let leftover = dict.leftover {
            throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "avcodec_open2(\(s.codecName)): unknown option '\(leftover)'")
        }
    }

    /// A new bit rate from the next frame on: FFmpeg 5.1's libx264 compares `bit_rate`,
    /// `rc_max_rate` and `rc_buffer_size` with its own before every frame and calls
    /// `x264_encoder_reconfig` when they changed. Other encoders ignore it.
    public func setBitRate(_ bitRate: Int, maxRate: Int, bufferSize: Int) {
        context.pointee.bit_rate = Int64(bitRate)
        context.pointee.rc_max_rate = Int64(maxRate)
        context.pointee.rc_buffer_size = Int32(clamping: bufferSize)
    }

    /// Sends one frame, or `nil` to flush. The frame's picture type is set here: decoders mark
    /// every raw frame as I, and libx264 would obey that and make every frame a keyframe; only
    /// `keyframe` (a segment's cut) asks for one (an IDR with the `forced-idr` option).
    public func send(_ frame: Frame?, keyframe: Bool = false) throws {
        frame?.pointer.pointee.pict_type = keyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        let code = avcodec_send_frame(context, frame?.pointer)
        if code == FFmpegError.endOfFileCode { return }
        try check(code, "avcodec_send_frame")
    }

    public func receive() throws -> Received<Packet> {
        let packet = try Packet()
        return try received(avcodec_receive_packet(context, packet.pointer), packet, "avcodec_receive_packet")
    }
}
