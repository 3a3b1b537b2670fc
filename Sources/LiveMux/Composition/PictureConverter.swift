import FFmpeg

/// Converts pictures to one size in yuv420p (libswscale), the scaler made when the first picture
/// that needs it arrives and again when the input changes shape; a picture already so passes as a
/// reference. What a graph input takes. Used by one thread.
final class PictureConverter {
    let width: Int, height: Int
    private var scaler: Scaler?

    init(width: Int, height: Int) { (self.width, self.height) = (width, height) }

    func convert(_ frame: Frame) throws -> Frame {
        if frame.width == width, frame.height == height, frame.format == PixelFormat.yuv420p.rawValue { return try frame.reference() }
        if scaler == nil || !scaler!.accepts(frame) {
            scaler = try Scaler(fromWidth: frame.width, height: frame.height, format: frame.format,
                                toWidth: width, height: height, format: .yuv420p)
        }
        return try scaler!.scale(frame)
    }
}
