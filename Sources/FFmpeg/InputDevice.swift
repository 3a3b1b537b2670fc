import CFFmpeg
import Synchronization

/// An open input: a capture device through libavdevice (lavfi, v4l2, x11grab, pulse, alsa) or any
/// file or URL libavformat reads. Used by its capture thread only, except `interrupt()`.
public final class InputDevice: @unchecked Sendable {
    public struct Stream: Sendable {
        public let index: Int
        public let mediaType: MediaType
        public let timeBase: Rational
        /// The lowest rate all its timestamps fit (`r_frame_rate`): the nominal rate of a
        /// constant-rate stream, often the time base's (90000/1) for a variable one; 0/1 unknown.
        public let baseFrameRate: Rational
        /// Frames over duration (`avg_frame_rate`); 0/1 when unknown.
        public let averageFrameRate: Rational
        public let parameters: CodecParameters
    }

    // `@exclusivity(unchecked)`: fields of the per-packet path, used by one thread (or under a
    // lock) with no overlapping access; see "Exclusivity" in docs/architecture.md.
    @exclusivity(unchecked) private var context: UnsafeMutablePointer<AVFormatContext>?
    public let streams: [Stream]
    /// True for capture devices (no file behind them): they run at their own pace.
    public let isDevice: Bool
    public let formatName: String
    private let interruption: Interruption

    /// An option the device or demuxer does not take (libavformat leaves it in the dictionary).
    public struct UnknownOption: Error, Sendable {
        public let key: String
    }

    /// Set from any thread to make a blocking read return.
    private final class Interruption: Sendable {
        let requested = Atomic<Bool>(false)
    }

    /// libavformat's name for the MP4/MOV demuxer.
    private static let mp4Format = "mov,mp4,m4a,3gp,3g2,mj2"
    /// Containers whose packets are whole frames, each with its own timestamps and key flag.
    private static let wholeFrameFormats: Set<String> = [mp4Format, "matroska,webm", "flv"]

    /// - Parameter reparse: false when the packets will only be remuxed: for containers whose
    ///   packets are whole frames with their own timestamps and key flags (MP4/MOV, Matroska,
    ///   FLV), libavformat then skips libavcodec's parsers (`AVFMT_FLAG_NOPARSE`), which add
    ///   nothing a remux needs and, for H.264 in MP4, cost a third of the reading.
    public init(format: String?, url: String, options: [(String, String)], reparse: Bool = true) throws {
        var inputFormat: UnsafePointer<AVInputFormat>? = nil
        if let format {
            inputFormat = try FFmpegLibrary.inputFormat(named: format)
            if inputFormat == nil {
                throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "av_find_input_format(\(format))")
            }
        }
        guard let ctx = avformat_alloc_context() else { throw outOfMemory("avformat_alloc_context") }
        interruption = Interruption()
        ctx.pointee.interrupt_callback.callback = { opaque in
            guard let opaque else { return 0 }
            let box = Unmanaged<Interruption>.fromOpaque(opaque).takeUnretainedValue()
            return box.requested.load(ordering: .relaxed) ? 1 : 0
        }
        ctx.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(interruption).toOpaque()

        var dict = try OptionDictionary(options)
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        // avformat_open_input frees the context on failure.
        try check(avformat_open_input(&opened, url, inputFormat, &dict.raw), "avformat_open_input(\(url))")
        context = opened
        if let key = dict.leftover {
            avformat_close_input(&context)
            throw UnknownOption(key: key)
        }
        let iformat = opened!.pointee.iformat!
        isDevice = iformat.pointee.flags & AVFMT_NOFILE != 0
        formatName = String(cString: iformat.pointee.name)
        if !reparse && Self.wholeFrameFormats.contains(formatName) {
            opened!.pointee.flags |= AVFMT_FLAG_NOPARSE | AVFMT_FLAG_NOFILLIN
        }
        // Swift skips deinit when init throws before every property is set: close it here.
        do {
            // Devices describe their streams in read_header; files need probing — except an MP4 that
            // is only remuxed: its header holds every codec parameter, and probing decodes frames.
            if !isDevice && !(!reparse && formatName == Self.mp4Format) {
                try check(avformat_find_stream_info(opened, nil), "avformat_find_stream_info(\(url))")
            }
            streams = try Self.streams(of: opened!)
        } catch {
            avformat_close_input(&context)
            throw error
        }
    }

    private static func streams(of context: UnsafeMutablePointer<AVFormatContext>) throws -> [Stream] {
        try (0..<Int(context.pointee.nb_streams)).map { i in
            let st = context.pointee.streams[i]!
            let known = { (r: AVRational) in r.den == 0 ? Rational(0, 1) : Rational(r) }
            return Stream(index: i,
                          mediaType: MediaType(st.pointee.codecpar.pointee.codec_type),
                          timeBase: Rational(st.pointee.time_base),
                          baseFrameRate: known(st.pointee.r_frame_rate),
                          averageFrameRate: known(st.pointee.avg_frame_rate),
                          parameters: try CodecParameters(copying: st.pointee.codecpar))
        }
    }

    deinit { avformat_close_input(&context) }

    /// The first stream of a type, as libavformat ranks them.
    public func bestStream(_ type: MediaType) -> Stream? {
        let t: AVMediaType = type == .video ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO
        let i = av_find_best_stream(context, t, -1, -1, nil, 0)
        return i >= 0 ? streams[Int(i)] : nil
    }

    /// Reads the next packet; false at the end of the input.
    public func read(into packet: Packet) throws -> Bool {
        packet.unreference()
        while true {
            let code = av_read_frame(context, packet.pointer)
            if code == FFmpegError.endOfFileCode { return false }
            if code == FFmpegError.tryAgainCode {
                // Non-blocking devices answer EAGAIN when no frame is ready yet.
                if interruption.requested.load(ordering: .relaxed) { return false }
                av_usleep(2000)
                continue
            }
            // An interrupted read ends the input: EIO from devices, AVERROR_EXIT from libavformat's own I/O.
            if code == FFmpegError.posix(EIO) || code == FFmpegError.exitCode, interruption.requested.load(ordering: .relaxed) { return false }
            try check(code, "av_read_frame(\(formatName))")
            return true
        }
    }

    /// Makes a blocking `read` give up: from any thread.
    public func interrupt() { interruption.requested.store(true, ordering: .relaxed) }
}
