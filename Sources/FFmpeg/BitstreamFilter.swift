import CFFmpeg

/// A libavcodec bitstream filter (`AVBSFContext`): `h264_mp4toannexb`, `hevc_mp4toannexb`,
/// `extract_extradata`, `aac_adtstoasc`. Used by one thread at a time (its owner holds a lock).
public final class BitstreamFilter: @unchecked Sendable {
    private var context: UnsafeMutablePointer<AVBSFContext>?
    /// The filter's name, for messages.
    public let name: String

    /// Opens the filter for a stream with `parameters` (their extradata is what the filter reads
    /// at init, such as an avcC record) and `timeBase`.
    public init(name: String, parameters: CodecParameters, timeBase: Rational = .milliseconds,
                options: [(String, String)] = []) throws {
        self.name = name
        guard let filter = av_bsf_get_by_name(name) else {
            throw FFmpegError(code: FFmpegError.posix(ENOSYS), function: "av_bsf_get_by_name(\(name))")
        }
        var ctx: UnsafeMutablePointer<AVBSFContext>? = nil
        try check(av_bsf_alloc(filter, &ctx), "av_bsf_alloc(\(name))")
        context = ctx
        try check(avcodec_parameters_copy(ctx!.pointee.par_in, parameters.pointer), "avcodec_parameters_copy")
        ctx!.pointee.time_base_in = timeBase.av
        for (k, v) in options {
            try check(av_opt_set(ctx!.pointee.priv_data, k, v, 0), "av_opt_set(\(name), \(k))")
        }
        try check(av_bsf_init(ctx), "av_bsf_init(\(name))")
    }

    deinit { av_bsf_free(&context) }

    /// The parameters the filter produces (for `h264_mp4toannexb`: the extradata in Annex B).
    public func outputParameters() throws -> CodecParameters {
        try CodecParameters(copying: context!.pointee.par_out)
    }

    /// Sends one packet (the filter takes its reference), or nil to drain.
    public func send(_ packet: Packet?) throws {
        try check(av_bsf_send_packet(context, packet?.pointer), "av_bsf_send_packet(\(name))")
    }

    /// The next filtered packet, `.needsInput` when the filter wants another, `.endOfStream` after a drain.
    public func receive() throws -> Received<Packet> {
        let packet = try Packet()
        return try received(av_bsf_receive_packet(context, packet.pointer), packet, "av_bsf_receive_packet(\(name))")
    }

    /// Filters one packet and returns everything the filter produced for it. After a failure the
    /// filter is flushed (`av_bsf_flush`), so the next packet starts clean.
    public func filter(_ packet: Packet) throws -> [Packet] {
        do {
            try send(packet)
            var out: [Packet] = []
            while case .value(let p) = try receive() { out.append(p) }
            return out
        } catch {
            av_bsf_flush(context)
            throw error
        }
    }
}

extension CodecParameters {
    /// Parameters for an H.264 or HEVC stream that carries `extradata` (Annex B parameter sets or
    /// an avcC/hvcC record), for a muxer or a bitstream filter.
    public static func video(hevc: Bool, width: Int, height: Int, extradata: [UInt8]) throws -> CodecParameters {
        let p = try CodecParameters()
        p.pointer.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        p.pointer.pointee.codec_id = hevc ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264
        p.pointer.pointee.width = Int32(width)
        p.pointer.pointee.height = Int32(height)
        try p.setExtradata(extradata)
        return p
    }

    /// Samples in one AAC-LC frame: what every AAC stream LiveMux writes or reads is timed by.
    public static let aacFrameSamples = 1024

    /// Parameters for an AAC stream with its AudioSpecificConfig as extradata.
    public static func aac(sampleRate: Int, channels: Int, extradata: [UInt8]) throws -> CodecParameters {
        let p = try CodecParameters()
        p.pointer.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        p.pointer.pointee.codec_id = AV_CODEC_ID_AAC
        p.pointer.pointee.sample_rate = Int32(sampleRate)
        p.pointer.pointee.frame_size = Int32(aacFrameSamples)
        p.pointer.pointee.profile = FF_PROFILE_AAC_LOW
        lm_default_channel_layout(&p.pointer.pointee.ch_layout, Int32(channels))
        try p.setExtradata(extradata)
        return p
    }

    /// Replaces the extradata (padded as libavcodec requires). Only before the parameters are shared.
    func setExtradata(_ bytes: [UInt8]) throws {
        av_freep(&pointer.pointee.extradata)
        pointer.pointee.extradata_size = 0
        guard !bytes.isEmpty else { return }
        guard let d = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else { throw outOfMemory("av_mallocz") }
        let data = d.assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: bytes.count) }
        pointer.pointee.extradata = data
        pointer.pointee.extradata_size = Int32(bytes.count)
    }
}
