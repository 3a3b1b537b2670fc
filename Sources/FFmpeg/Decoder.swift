import CFFmpeg

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
