import CFFmpeg

/// A video frame as one JPEG picture (libavcodec's mjpeg encoder, after libswscale to full-range
/// 4:2:0 at the size asked for): the dashboard's snapshot. Made on demand, at most once a second,
/// so the encoder and scaler are not kept between pictures.
public enum JPEGEncoder {
    /// The mjpeg quantizer scale (2 best … 31 worst), as `ffmpeg -q:v`: 4 is sharp text at about
    /// a tenth of the raw size.
    static let quality: Int32 = 4

    /// `frame` scaled to `width` (its own when nil), the height keeping its aspect, both even.
    public static func encode(_ frame: Frame, width: Int? = nil) throws -> [UInt8] {
        let (w, h) = size(of: frame, width: width)
        guard let fullRange = PixelFormat(name: "yuvj420p") else {
            throw FFmpegError(code: FFmpegError.posix(ENOSYS), function: "av_get_pix_fmt(yuvj420p)")
        }
        let picture = try Scaler(fromWidth: frame.width, height: frame.height, format: frame.format,
                                 toWidth: w, height: h, format: fullRange).scale(frame)
        picture.pts = 0
        var settings = Encoder.Settings(codecName: "mjpeg", bitRate: 0, timeBase: Rational(1, 25))
        settings.width = w
        settings.height = h
        settings.pixelFormat = fullRange
        settings.globalHeader = false
        settings.options = [("flags", "+qscale"), ("global_quality", String(quality * FF_QP2LAMBDA))]
        let encoder = try Encoder(settings)
        try encoder.send(picture)
        try encoder.send(nil)
        guard case .value(let packet) = try encoder.receive() else {
            throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "avcodec_receive_packet(mjpeg): no picture")
        }
        return packet.bytes
    }

    /// The picture's size: `width` rounded down to even (at least 2), the height in proportion.
    public static func size(of frame: Frame, width: Int?) -> (width: Int, height: Int) {
        guard let width, frame.width > 0 else { return (frame.width & ~1, frame.height & ~1) }
        let w = max(2, width & ~1)
        let h = max(2, Int((Double(w) * Double(frame.height) / Double(frame.width) / 2).rounded()) * 2)
        return (w, h)
    }
}
