import FFmpeg

/// Makes a captured frame into the 4:2:0 picture of each size the video lanes encode at, with
/// one libswscale context per size, kept while the source's frames keep their shape. A frame
/// that already is that picture is passed on as it is.
final class PictureScaler {
    private var scalers: [Scaler] = []

    func picture(of frame: Frame, width: Int, height: Int) throws -> Frame {
        if frame.width == width, frame.height == height, frame.format == PixelFormat.yuv420p.rawValue { return frame }
        if let i = scalers.firstIndex(where: { $0.width == width && $0.height == height }) {
            if scalers[i].accepts(frame) { return try scalers[i].scale(frame) }
            scalers.remove(at: i)
        }
        let scaler = try Scaler(fromWidth: frame.width, height: frame.height, format: frame.format,
                                toWidth: width, height: height, format: .yuv420p)
        scalers.append(scaler)
        return try scaler.scale(frame)
    }
}
