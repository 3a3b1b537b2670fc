import CFFmpeg

/// An owned `AVFrame` of video or audio. Belongs to one thread at a time (see `Packet`).
public final class Frame: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVFrame>

    public init() throws {
        guard let f = av_frame_alloc() else { throw outOfMemory("av_frame_alloc") }
        pointer = f
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&f)
    }

    public func unreference() { av_frame_unref(pointer) }

    /// A new frame sharing this one's buffers (`av_frame_ref`).
    public func reference() throws -> Frame {
        let other = try Frame()
        try check(av_frame_ref(other.pointer, pointer), "av_frame_ref")
        return other
    }

    public var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }
    /// The best timestamp the decoder could give (`best_effort_timestamp`).
    public var bestEffortTimestamp: Int64 { pointer.pointee.best_effort_timestamp }
    public var width: Int { Int(pointer.pointee.width) }
    public var height: Int { Int(pointer.pointee.height) }
    /// `AVPixelFormat` or `AVSampleFormat` raw value.
    public var format: Int32 { pointer.pointee.format }
    public var sampleCount: Int { Int(pointer.pointee.nb_samples) }
    public var sampleRate: Int { Int(pointer.pointee.sample_rate) }
    public var channelCount: Int { Int(pointer.pointee.ch_layout.nb_channels) }

    /// Allocates video planes of the given size in yuv420p-style `format`.
    public static func video(width: Int, height: Int, pixelFormat: PixelFormat) throws -> Frame {
        let frame = try Frame()
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        frame.pointer.pointee.format = pixelFormat.rawValue
        try check(av_frame_get_buffer(frame.pointer, 0), "av_frame_get_buffer")
        return frame
    }

    /// Allocates an audio frame of `samples` samples.
    public static func audio(samples: Int, format: SampleFormat, sampleRate: Int, channels: Int) throws -> Frame {
        let frame = try Frame()
        frame.pointer.pointee.nb_samples = Int32(samples)
        frame.pointer.pointee.format = format.rawValue
        frame.pointer.pointee.sample_rate = Int32(sampleRate)
        lm_default_channel_layout(&frame.pointer.pointee.ch_layout, Int32(channels))
        try check(av_frame_get_buffer(frame.pointer, 0), "av_frame_get_buffer")
        return frame
    }

    public func makeWritable() throws { try check(av_frame_make_writable(pointer), "av_frame_make_writable") }
}

/// A pixel format by name (`av_get_pix_fmt`), kept as its raw value.
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public init?(name: String) {
        let v = av_get_pix_fmt(name)
        if v == AV_PIX_FMT_NONE { return nil }
        rawValue = v.rawValue
    }
    public static let yuv420p = PixelFormat(rawValue: AV_PIX_FMT_YUV420P.rawValue)
    public var description: String {
        av_get_pix_fmt_name(AVPixelFormat(rawValue: rawValue)).map { String(cString: $0) } ?? "none"
    }
    var av: AVPixelFormat { AVPixelFormat(rawValue: rawValue) }
}

/// An audio sample format, kept as its raw value.
public struct SampleFormat: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let floatPlanar = SampleFormat(rawValue: AV_SAMPLE_FMT_FLTP.rawValue)
    public static let s16 = SampleFormat(rawValue: AV_SAMPLE_FMT_S16.rawValue)
    public var description: String {
        av_get_sample_fmt_name(AVSampleFormat(rawValue: rawValue)).map { String(cString: $0) } ?? "none"
    }
    var av: AVSampleFormat { AVSampleFormat(rawValue: rawValue) }
}
