import CFFmpeg

/// A libavcodec parser (`av_parser_parse2`) for H.264 or HEVC, used to read what the bitstream
/// says about itself: frame size, whether an access unit is a keyframe, and its picture order.
/// Used by one thread at a time (its owner holds a lock).
public final class Parser: @unchecked Sendable {
    private let parser: UnsafeMutablePointer<AVCodecParserContext>
    private let codec: UnsafeMutablePointer<AVCodecContext>

    /// What the parser learned from one access unit.
    public struct Info: Sendable, Equatable {
        /// Picture width; 0 when no SPS has been seen.
        public var width: Int
        /// Picture height; 0 when no SPS has been seen.
        public var height: Int
        /// True for an IDR/IRAP picture.
        public var isKeyframe: Bool
        /// The picture order count (POC): the order pictures are shown in, from the start of their
        /// coded video sequence (it starts again at an IDR).
        public var pictureOrder = 0
        /// Frames per second from the timing info of the parameter sets (H.264 SPS VUI: time_scale
        /// / (2 · num_units_in_tick); HEVC VPS, else SPS VUI); nil when they carry none.
        public var frameRate: Rational? = nil
    }

    /// A parser for H.264, or HEVC when `hevc` is true.
    public init(hevc: Bool) throws {
        let id = hevc ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264
        guard let p = av_parser_init(Int32(id.rawValue)) else {
            throw FFmpegError(code: FFmpegError.posix(ENOSYS), function: "av_parser_init(\(hevc ? "hevc" : "h264"))")
        }
        guard let c = avcodec_alloc_context3(nil) else {
            av_parser_close(p)
            throw outOfMemory("avcodec_alloc_context3")
        }
        c.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        c.pointee.codec_id = id
        // H.264 counts time in fields: a frame is two ticks, as libavcodec's decoder sets, so the
        // parser's frame rate is time_scale / (2 · num_units_in_tick).
        c.pointee.ticks_per_frame = hevc ? 1 : 2
        parser = p
        codec = c
        // Every buffer we give is one whole access unit.
        parser.pointee.flags |= PARSER_FLAG_COMPLETE_FRAMES
    }

    deinit {
        av_parser_close(parser)
        var c: UnsafeMutablePointer<AVCodecContext>? = codec
        avcodec_free_context(&c)
    }

    /// Parses one Annex B access unit (parameter sets seen earlier are remembered). Returns nil
    /// when the parser found no picture in it.
    public func parse(_ bytes: [UInt8]) -> Info? {
        guard !bytes.isEmpty else { return nil }
        // The parser reads up to AV_INPUT_BUFFER_PADDING_SIZE bytes past the end.
        var padded = bytes
        padded.append(contentsOf: repeatElement(0, count: Int(AV_INPUT_BUFFER_PADDING_SIZE)))
        return padded.withUnsafeMutableBufferPointer { parse($0.baseAddress!, count: bytes.count) }
    }

    /// The same for a demuxed packet, without copying it (libavformat pads every packet).
    public func parse(_ packet: Packet) -> Info? {
        guard packet.size > 0 else { return nil }
        return parse(packet.pointer.pointee.data, count: packet.size)
    }

    private func parse(_ start: UnsafeMutablePointer<UInt8>, count: Int) -> Info? {
        var outData: UnsafeMutablePointer<UInt8>? = nil
        var outSize: Int32 = 0
        var produced = false
        var data = start
        var left = Int32(count)
        while left > 0 {
            let used = av_parser_parse2(parser, codec, &outData, &outSize, data, left,
                                        lm_nopts_value(), lm_nopts_value(), 0)
            if used < 0 { break }
            if outSize > 0 { produced = true }
            data += Int(used)
            left -= used
            if used == 0 { break }
        }
        let order = Int(parser.pointee.output_picture_number)
        guard produced, parser.pointee.width > 0 || codec.pointee.width > 0 else {
            return produced ? Info(width: 0, height: 0, isKeyframe: parser.pointee.key_frame == 1, pictureOrder: order) : nil
        }
        let w = parser.pointee.width > 0 ? parser.pointee.width : codec.pointee.width
        let h = parser.pointee.height > 0 ? parser.pointee.height : codec.pointee.height
        // The parsers set the rate only from timing info (h264_parser.c, hevc_parser.c).
        let rate = codec.pointee.framerate
        return Info(width: Int(w), height: Int(h), isKeyframe: parser.pointee.key_frame == 1, pictureOrder: order,
                    frameRate: rate.num > 0 && rate.den > 0 ? Rational(rate) : nil)
    }
}
