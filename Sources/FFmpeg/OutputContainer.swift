import CFFmpeg

/// A muxer (`AVFormatContext` for output) that writes no file of its own: its output context
/// collects what each call writes into a pooled buffer, and the call returns those bytes, so the
/// caller can label them and hand them to any number of sinks.
///
/// Used by the mux thread only.
public final class OutputContainer: @unchecked Sendable {
    // `@exclusivity(unchecked)`: fields of the per-packet path, used by one thread (or under a
    // lock) with no overlapping access; see "Exclusivity" in docs/architecture.md.
    @exclusivity(unchecked) private var context: UnsafeMutablePointer<AVFormatContext>?
    /// The muxer's output: writes go to `collector`, nothing seeks (only the trailer seeks, and it
    /// has an output of its own). Its position is the true file offset.
    @exclusivity(unchecked) private var output: UnsafeMutablePointer<AVIOContext>?
    private let collector = MuxedBytesCollector()
    /// The output context's own buffer, flushed into the collector after every call.
    private static let outputBufferSize: Int32 = 32 * 1024
    private let seekable: Bool
    private let options: [(String, String)]
    /// After each packet, `av_write_frame(ctx, NULL)`: a fragmenting muxer (`mp4` with
    /// `frag_custom`) then emits that packet's fragment now, not when the next packet arrives.
    private let flushesEachPacket: Bool
    /// Bytes produced so far: the offset the next bytes land at in a file.
    @exclusivity(unchecked) private var bytesWritten: Int64 = 0

    /// - Parameters:
    ///   - formatName: a libavformat muxer name (`asf`, `flv`).
    ///   - seekable: whether every destination of these bytes can apply the trailer's updates to
    ///     earlier bytes (a regular file). Muxers write a different header and trailer for
    ///     non-seekable outputs (ASF's broadcast flag, no FLV duration placeholders).
    ///   - options: private options of the muxer (`packet_size`, `flvflags`).
    ///   - flushesEachPacket: see the property.
    public init(formatName: String, seekable: Bool, options: [(String, String)] = [], flushesEachPacket: Bool = false) throws {
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&ctx, nil, formatName, nil), "avformat_alloc_output_context2(\(formatName))")
        context = ctx
        self.seekable = seekable
        self.options = options
        self.flushesEachPacket = flushesEachPacket
        guard let buffer = av_malloc(Int(Self.outputBufferSize)) else { throw outOfMemory("av_malloc") }
        let opaque = Unmanaged.passUnretained(collector).toOpaque()
        output = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Self.outputBufferSize, 1, opaque, nil, { opaque, data, count in
            let collector = Unmanaged<MuxedBytesCollector>.fromOpaque(opaque!).takeUnretainedValue()
            return collector.append(UnsafeRawBufferPointer(start: data, count: Int(count))) ? count : lm_averror(ENOMEM)
        }, nil)
        guard let output else {
            av_free(buffer)
            throw outOfMemory("avio_alloc_context")
        }
        // Muxers write a different header and trailer for outputs that can seek (a file's).
        output.pointee.seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0
    }

    deinit {
        if let ctx = context {
            // pb is ours (or the trailer's, already freed); never let libavformat close it.
            ctx.pointee.pb = nil
            avformat_free_context(ctx)
        }
        if output != nil {
            av_freep(&output!.pointee.buffer)
            avio_context_free(&output)
        }
    }

    /// True when this container format can carry the codec of `parameters` (`avformat_query_codec`).
    public static func canCarry(_ parameters: CodecParameters, formatName: String) -> Bool {
        guard let format = av_guess_format(formatName, nil, nil) else { return false }
        return avformat_query_codec(format, parameters.pointer.pointee.codec_id, FF_COMPLIANCE_NORMAL) == 1
    }

    /// Adds a stream carrying `parameters`; returns its index. `codecTag` (a fourcc) overrides the
    /// muxer's own choice, for codecs its tables lack.
    @discardableResult
    public func addStream(_ parameters: CodecParameters, timeBase: Rational, codecTag: String? = nil) throws -> Int {
        guard let st = avformat_new_stream(context, nil) else { throw outOfMemory("avformat_new_stream") }
        try check(avcodec_parameters_copy(st.pointee.codecpar, parameters.pointer), "avcodec_parameters_copy")
        var tag: UInt32 = 0  // 0: let the muxer choose its own tag
        if let c = codecTag.map({ Array($0.utf8) }), c.count == 4 {
            tag = lm_mktag(CChar(bitPattern: c[0]), CChar(bitPattern: c[1]), CChar(bitPattern: c[2]), CChar(bitPattern: c[3]))
        }
        st.pointee.codecpar.pointee.codec_tag = tag
        st.pointee.time_base = timeBase.av
        return Int(st.pointee.index)
    }

    /// Each stream's time base. Muxers may change them in `writeHeader` (ASF and FLV use 1/1000).
    public var streamTimeBases: [Rational] {
        guard let ctx = context else { return [] }
        return (0..<Int(ctx.pointee.nb_streams)).map { Rational(ctx.pointee.streams[$0]!.pointee.time_base) }
    }

    public func writeHeader() throws -> MuxedBytes {
        try collect { ctx in
            var dict = try OptionDictionary(options)
            try check(avformat_write_header(ctx, &dict.raw), "avformat_write_header")
            if let leftover = dict.leftover {
                throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "avformat_write_header: unknown option '\(leftover)'")
            }
        }
    }

    /// Writes one packet to stream `stream` with these timestamps, in that stream's time base
    /// (`av_write_frame`: the caller interleaves). The bytes may be empty: ASF emits only whole
    /// packets. The packet is left as it was, so several containers can write the same packet
    /// without copies of it.
    public func write(_ packet: Packet, stream: Int, pts: Int64, dts: Int64, duration: Int64) throws -> MuxedBytes {
        let p = packet.pointer
        let saved = (p.pointee.pts, p.pointee.dts, p.pointee.duration, p.pointee.stream_index, p.pointee.buf)
        defer { (p.pointee.pts, p.pointee.dts, p.pointee.duration, p.pointee.stream_index, p.pointee.buf) = saved }
        (p.pointee.pts, p.pointee.dts, p.pointee.duration, p.pointee.stream_index) = (pts, dts, duration, Int32(stream))
        // Without `buf`, av_write_frame borrows the payload for the call instead of taking a
        // reference (an allocation and two atomic counts on memory the reader thread owns).
        // ASF, FLV and fragmenting MP4 copy what they write; a bitstream filter a muxer adds copies it first.
        p.pointee.buf = nil
        return try collect { ctx in
            try check(av_write_frame(ctx, p), "av_write_frame")
            if flushesEachPacket { try check(av_write_frame(ctx, nil), "av_write_frame(flush)") }
        }
    }

    /// What the trailer produced: bytes to append, and for a seekable output the earlier bytes it
    /// rewrote (the ASF header with its sizes and duration, FLV's duration and file size).
    public struct Trailer: Sendable {
        public var appended: [UInt8]
        public var updates: [(offset: Int64, bytes: [UInt8])]

        public init(appended: [UInt8], updates: [(offset: Int64, bytes: [UInt8])]) {
            self.appended = appended
            self.updates = updates
        }
    }

    /// Writes the trailer. A dynamic buffer cannot stand in here: it is seekable in itself, so the
    /// muxer's seek back to the header would land inside the trailer's own buffer. Instead the
    /// trailer goes to an AVIOContext that knows the true file offset and records every seek-back
    /// as an update of earlier bytes.
    public func writeTrailer() throws -> Trailer {
        guard let ctx = context else { throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "av_write_trailer") }
        let recorder = TrailerRecorder(startOffset: bytesWritten)
        let size: Int32 = 4096
        guard let buffer = av_malloc(Int(size)) else { throw outOfMemory("av_malloc") }
        let opaque = Unmanaged.passUnretained(recorder).toOpaque()
        let seek: (@convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64)? = seekable ? { opaque, offset, whence in
            Unmanaged<TrailerRecorder>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence: whence)
        } : nil
        guard let pb = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 1, opaque, nil, { opaque, data, count in
            Unmanaged<TrailerRecorder>.fromOpaque(opaque!).takeUnretainedValue()
                .write(UnsafeRawBufferPointer(start: data, count: Int(count)))
            return count
        }, seek) else {
            av_free(buffer)
            throw outOfMemory("avio_alloc_context")
        }
        pb.pointee.pos = bytesWritten  // so avio_tell gives the true file offset
        ctx.pointee.pb = pb
        let code = av_write_trailer(ctx)
        avio_flush(pb)
        ctx.pointee.pb = nil
        var freeable: UnsafeMutablePointer<AVIOContext>? = pb
        av_freep(&freeable!.pointee.buffer)
        avio_context_free(&freeable)
        try check(code, "av_write_trailer")
        bytesWritten += Int64(recorder.appended.count)
        return Trailer(appended: recorder.appended, updates: recorder.updates)
    }

    /// Runs `body` with the muxer writing to `output` and returns what it wrote, in the buffer
    /// it was collected in (not a copy).
    private func collect(_ body: (UnsafeMutablePointer<AVFormatContext>) throws -> Void) throws -> MuxedBytes {
        guard let ctx = context, let output else { throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "av_write_frame") }
        ctx.pointee.pb = output
        var failure: Error? = nil
        do { try body(ctx) } catch { failure = error }
        avio_flush(output)
        let bytes = collector.take()
        if let failure { throw failure }
        if collector.outOfMemory { throw outOfMemory("realloc") }
        bytesWritten += Int64(bytes.count)
        return bytes
    }
}
