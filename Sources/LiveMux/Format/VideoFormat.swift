import FFmpeg

/// The size and rate a recording's video is encoded at: what the options ask for, else what the
/// source delivers (see `resolve`).
struct VideoFormat: Sendable, Equatable {
    var width: Int
    var height: Int
    var fps: FrameRate

    /// The options where given, else the source's own format. A source that gives no size gets
    /// the built-in one; an odd size is cut to even (4:2:0 needs even sizes). A source with no
    /// usable nominal rate (unknown, a variable rate's time base such as 90000/1, or a steady
    /// rate outside 1 to 240 fps) gets its average rate, else `builtInFrameRate`; each with a
    /// warning that says which it was.
    static func resolve(_ settings: VideoSettings, source: SourceFormat, report: (String) -> Void) -> VideoFormat {
        var width = VideoSettings.builtInWidth, height = VideoSettings.builtInHeight
        if let w = settings.width, let h = settings.height {
            (width, height) = (w, h)
        } else if source.width > 0, source.height > 0 {
            (width, height) = (source.width & ~1, source.height & ~1)
            if (width, height) != (source.width, source.height) {
                report("the source is \(source.width)x\(source.height); 4:2:0 video needs an even size, so it is scaled to \(width)x\(height) (or give --size)")
            }
        } else {
            report("the source does not say its frame size: encoding \(width)x\(height) (give --size to choose)")
        }
        if let fps = settings.fps { return VideoFormat(width: width, height: height, fps: fps) }
        if let nominal = FrameRate(source.frameRate), nominal.isSupported {
            return VideoFormat(width: width, height: height, fps: nominal)
        }
        let said: String
        if let nominal = FrameRate(source.frameRate) {
            said = isSteady(nominal, average: source.averageFrameRate)
                ? "runs at \(nominal) fps, outside the 1 to \(FrameRate.maxFramesPerSecond) fps livemux records at"
                : "gives no fixed frame rate (\(source.frameRate), a time base rather than a rate)"
        } else {
            said = "gives no frame rate"
        }
        let fps: FrameRate
        if let average = FrameRate(source.averageFrameRate), average.isSupported {
            fps = average
            report("the source \(said): using its average rate, \(fps) fps (give --fps to choose)")
        } else {
            fps = VideoSettings.builtInFrameRate
            report("the source \(said): using \(fps) fps (give --fps to choose)")
        }
        return VideoFormat(width: width, height: height, fps: fps)
    }

    /// Whether a nominal rate is the rate frames come at: nothing says otherwise (a lavfi
    /// output has no average), or the average is within 1% of it. A variable-rate file's
    /// r_frame_rate is its time base (90000/1), far above its average.
    private static func isSteady(_ nominal: FrameRate, average: Rational) -> Bool {
        guard let average = FrameRate(average) else { return true }
        return abs(average.framesPerSecond - nominal.framesPerSecond) <= nominal.framesPerSecond * steadyTolerance
    }
    private static let steadyTolerance = 0.01

    /// Frames between keyframes for a GOP of `seconds`: at least 1.
    func gopFrames(_ seconds: Double) -> Int { max(1, Int(fps.frames(in: seconds))) }
}
