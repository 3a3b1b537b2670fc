import CFFmpeg

/// A first-in first-out store of audio samples that hands the encoder frames of exactly the size it
/// wants (`av_audio_fifo`).
public final class AudioFIFO: @unchecked Sendable {
    private let fifo: OpaquePointer
    private let format: SampleFormat
    private let channels: Int
    private let sampleRate: Int

    public init(format: SampleFormat, channels: Int, sampleRate: Int) throws {
        guard let f = av_audio_fifo_alloc(format.av, Int32(channels), 4096) else { throw outOfMemory("av_audio_fifo_alloc") }
        fifo = f
        self.format = format
        self.channels = channels
        self.sampleRate = sampleRate
    }

    deinit { av_audio_fifo_free(fifo) }

    public var count: Int { Int(av_audio_fifo_size(fifo)) }

    /// Appends `count` samples of `frame` from sample `offset` on (to trim sample-accurately).
    public func write(_ frame: Frame, from offset: Int, count n: Int) throws {
        precondition(offset >= 0 && offset + n <= frame.sampleCount)
        guard n > 0 else { return }
        let bytesPerSample = Int(av_get_bytes_per_sample(format.av))
        let planar = av_sample_fmt_is_planar(format.av) != 0
        let planes = planar ? channels : 1
        let stride = planar ? bytesPerSample : bytesPerSample * channels
        var pointers = [UnsafeMutableRawPointer?](repeating: nil, count: planes)
        for p in 0..<planes {
            pointers[p] = frame.pointer.pointee.extended_data[p].map { UnsafeMutableRawPointer($0 + offset * stride) }
        }
        let written = pointers.withUnsafeMutableBufferPointer { buf in
            av_audio_fifo_write(fifo, buf.baseAddress, Int32(n))
        }
        try check(written, "av_audio_fifo_write")
    }

    /// Removes up to `samples` samples as a new frame; nil when empty.
    public func read(samples: Int) throws -> Frame? {
        let n = min(samples, count)
        guard n > 0 else { return nil }
        let frame = try Frame.audio(samples: n, format: format, sampleRate: sampleRate, channels: channels)
        let got = try withUnsafePointer(to: &frame.pointer.pointee.data) { d in
            let data = UnsafeMutableRawPointer(mutating: d).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            return try check(av_audio_fifo_read(fifo, data, Int32(n)), "av_audio_fifo_read")
        }
        frame.pointer.pointee.nb_samples = got
        return frame
    }

    /// Moves up to `samples` samples into `frame` (of this FIFO's format) from its sample `offset`
    /// on, over what was there: how an input's samples are laid over silence. Returns how many.
    public func read(into frame: Frame, at offset: Int, samples: Int) throws -> Int {
        let n = min(samples, count, frame.sampleCount - offset)
        guard n > 0 else { return 0 }
        let bytesPerSample = Int(av_get_bytes_per_sample(format.av))
        let planar = av_sample_fmt_is_planar(format.av) != 0
        let stride = planar ? bytesPerSample : bytesPerSample * channels
        var pointers = (0..<(planar ? channels : 1)).map { p in
            frame.pointer.pointee.extended_data[p].map { UnsafeMutableRawPointer($0 + offset * stride) }
        }
        return Int(try pointers.withUnsafeMutableBufferPointer { buf in
            try check(av_audio_fifo_read(fifo, buf.baseAddress, Int32(n)), "av_audio_fifo_read")
        })
    }

    /// Discards up to `samples` samples from the front.
    public func drain(_ samples: Int) {
        let n = min(samples, count)
        if n > 0 { av_audio_fifo_drain(fifo, Int32(n)) }
    }
}
