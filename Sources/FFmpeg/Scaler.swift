import CFFmpeg

/// Converts video frames between sizes and pixel formats (libswscale).
public final class Scaler: @unchecked Sendable {
    private let context: OpaquePointer
    public let width: Int
    public let height: Int
    public let pixelFormat: PixelFormat
    private let sourceWidth: Int, sourceHeight: Int, sourceFormat: Int32

    public init(fromWidth sw: Int, height sh: Int, format sf: Int32,
                toWidth dw: Int, height dh: Int, format df: PixelFormat) throws {
        guard let c = sws_getContext(Int32(sw), Int32(sh), AVPixelFormat(rawValue: sf),
                                     Int32(dw), Int32(dh), df.av, SWS_BICUBIC, nil, nil, nil) else {
            throw FFmpegError(code: FFmpegError.posix(EINVAL),
                              function: "sws_getContext(\(sw)x\(sh) \(PixelFormat(rawValue: sf)) -> \(dw)x\(dh) \(df))")
        }
        context = c
        width = dw; height = dh; pixelFormat = df
        sourceWidth = sw; sourceHeight = sh; sourceFormat = sf
    }

    deinit { sws_freeContext(context) }

    /// True when this scaler was made for frames shaped like `frame`.
    public func accepts(_ frame: Frame) -> Bool {
        frame.width == sourceWidth && frame.height == sourceHeight && frame.format == sourceFormat
    }

    public func scale(_ source: Frame) throws -> Frame {
        let out = try Frame.video(width: width, height: height, pixelFormat: pixelFormat)
        let src = source.pointer
        let dst = out.pointer
        try withUnsafePointer(to: &src.pointee.data) { sd in
            try withUnsafePointer(to: &src.pointee.linesize) { sl in
                try withUnsafePointer(to: &dst.pointee.data) { dd in
                    try withUnsafePointer(to: &dst.pointee.linesize) { dl in
                        let sData = UnsafeRawPointer(sd).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
                        let sLines = UnsafeRawPointer(sl).assumingMemoryBound(to: Int32.self)
                        let dData = UnsafeRawPointer(dd).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
                        let dLines = UnsafeRawPointer(dl).assumingMemoryBound(to: Int32.self)
                        try check(sws_scale(context, sData, sLines, 0, Int32(source.height), dData, dLines), "sws_scale")
                    }
                }
            }
        }
        out.pts = source.pts
        return out
    }
}
