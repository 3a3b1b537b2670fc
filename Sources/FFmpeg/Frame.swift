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

    /// A black yuv420p picture: what a composed source shows before its first frame.
    public static func black(width: Int, height: Int) throws -> Frame {
        let frame = try video(width: width, height: height, pixelFormat: .yuv420p)
        let data = frame.pointer.pointee.data, lines = frame.pointer.pointee.linesize
        var planes: [UnsafeMutablePointer<UInt8>?] = [data.0, data.1, data.2, data.3]
        var sizes: [Int] = [Int(lines.0), Int(lines.1), Int(lines.2), Int(lines.3)]
        try check(av_image_fill_black(&planes, &sizes, AV_PIX_FMT_YUV420P, AVCOL_RANGE_MPEG, Int32(width), Int32(height)),
                  "av_image_fill_black")
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

    /// An audio frame of `samples` samples of silence (`av_samples_set_silence`): what fills the
    /// gap of a microphone that went away.
    public static func silence(samples: Int, format: SampleFormat, sampleRate: Int, channels: Int) throws -> Frame {
        let frame = try audio(samples: samples, format: format, sampleRate: sampleRate, channels: channels)
        try check(av_samples_set_silence(frame.pointer.pointee.extended_data, 0, Int32(samples), Int32(channels), format.av),
                  "av_samples_set_silence")
        return frame
    }

    /// A copy of this audio frame without its first `count` samples (`av_samples_copy`).
    public func droppingSamples(_ count: Int) throws -> Frame {
        precondition(count >= 0 && count < sampleCount)
        let format = SampleFormat(rawValue: self.format)
        let rest = try Frame.audio(samples: sampleCount - count, format: format, sampleRate: sampleRate, channels: channelCount)
        try check(av_samples_copy(rest.pointer.pointee.extended_data, pointer.pointee.extended_data, 0, Int32(count),
                                  Int32(sampleCount - count), Int32(channelCount), format.av), "av_samples_copy")
        return rest
    }

}
