import CFFmpeg

extension Frame {
    /// A copy of this planar float audio frame with every sample times `gain` (0: silence): a
    /// source's volume, which may change between two frames.
    public func scaled(by gain: Float) throws -> Frame {
        precondition(format == SampleFormat.floatPlanar.rawValue, "planar float frames only")
        let out = try Frame.audio(samples: sampleCount, format: .floatPlanar, sampleRate: sampleRate, channels: channelCount)
        out.pts = pts
        for channel in 0..<channelCount {
            guard let source = pointer.pointee.extended_data[channel], let target = out.pointer.pointee.extended_data[channel] else { continue }
            let from = UnsafeRawPointer(source).assumingMemoryBound(to: Float.self)
            let to = UnsafeMutableRawPointer(target).assumingMemoryBound(to: Float.self)
            for i in 0..<sampleCount { to[i] = from[i] * gain }
        }
        return out
    }
}
