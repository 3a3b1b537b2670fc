import CFFmpeg

extension Frame {
    /// The largest sample magnitude of an audio frame, 1.0 being full scale, in any of
    /// libavutil's integer and float formats, packed or planar: what a level meter shows.
    public var peakAmplitude: Double {
        let format = AVSampleFormat(rawValue: self.format)
        let planar = av_sample_fmt_is_planar(format) != 0
        let planes = planar ? channelCount : 1
        let count = sampleCount * (planar ? 1 : channelCount)
        var peak = 0.0
        for plane in 0..<planes {
            guard let data = pointer.pointee.extended_data[plane] else { continue }
            let raw = UnsafeRawPointer(data)
            switch av_get_packed_sample_fmt(format) {
            case AV_SAMPLE_FMT_FLT: peak = max(peak, Self.peak(raw, count, Float.self) { Double($0) })
            case AV_SAMPLE_FMT_DBL: peak = max(peak, Self.peak(raw, count, Double.self) { $0 })
            case AV_SAMPLE_FMT_S16: peak = max(peak, Self.peak(raw, count, Int16.self) { Double($0) / 32768 })
            case AV_SAMPLE_FMT_S32: peak = max(peak, Self.peak(raw, count, Int32.self) { Double($0) / 2147483648 })
            case AV_SAMPLE_FMT_S64: peak = max(peak, Self.peak(raw, count, Int64.self) { Double($0) / 9223372036854775808 })
            case AV_SAMPLE_FMT_U8: peak = max(peak, Self.peak(raw, count, UInt8.self) { (Double($0) - 128) / 128 })
            default: break
            }
        }
        return peak
    }

    private static func peak<T>(_ raw: UnsafeRawPointer, _ count: Int, _ type: T.Type, _ value: (T) -> Double) -> Double {
        var peak = 0.0
        for sample in UnsafeBufferPointer(start: raw.assumingMemoryBound(to: T.self), count: count) {
            peak = max(peak, abs(value(sample)))
        }
        return peak
    }
}
