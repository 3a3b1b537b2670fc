/// The libavfilter graph text for a kind's sources: the given `--filter-complex`, or the default
/// composition (the layout) or mix (unity gains, a limiter) followed by `--vf` / `--af`; nil when
/// one source needs no graph. Inputs are labelled `[v0]`, `[v1]` … / `[a0]` …; the output `[vout]` /
/// `[aout]`.
enum GraphDescription {
    static let videoOutput = "vout", audioOutput = "aout"
    /// The limiter's ceiling: sources at full scale added up come out just under it, never clipped.
    static let limiterCeiling = 0.944  // −0.5 dBFS
    /// Its look-ahead, the least alimiter takes: a live mix cannot wait for more. Compensating it
    /// (`latency=1`) held each frame's last 5 ms (the default attack) back until the next frame
    /// came, and an AAC frame ending there waited a whole device packet; uncompensated, 0.1 ms
    /// only moves the sound that much later.
    static let limiterAttackMilliseconds = 0.1
    /// alimiter refuses a look-ahead under a sample or so (0.1 ms is less than one at 8 kHz).
    static let limiterAttackSamples = 2.0
    /// The picture-in-picture's width and margin, as fractions of the output width.
    static let pipWidthFraction = 4, pipMarginFraction = 40

    /// `sizes`: each video source's size as its graph input takes it (the first is the output's).
    /// `main`: the source in the main picture (the first in the cells), fitted to the output's size;
    /// `hidden`: sources left out of the picture (removed while live), their frames discarded.
    /// `always`: a graph even where one source needs none (`null`).
    static func video(sizes: [(width: Int, height: Int)], _ c: Composition, main: Int = 0, hidden: Set<Int> = [],
                      always: Bool = false) -> String? {
        if let graph = c.videoGraph { return graph }
        guard always || sizes.count > 1 || c.videoFilter != nil else { return nil }
        let (width, height) = sizes[0]
        let order = [main] + sizes.indices.filter { $0 != main && !hidden.contains($0) }
        var chain: String
        switch c.layout {
        case .pip, .pipTopLeft, .pipTopRight, .pipBottomLeft:
            chain = pictureInPicture(order: order, width: width, height: height, layout: c.layout)
        case .sideBySide, .topBottom:
            chain = cells(order: order, width: width, height: height, across: c.layout == .sideBySide)
        }
        if let filter = c.videoFilter { chain += "[composed];[composed]\(filter)" }
        let discarded = hidden.sorted().map { "[v\($0)]nullsink;" }.joined()
        return discarded + chain + "[\(videoOutput)]"
    }

    private static func even(_ n: Int) -> Int { max(2, n / 2 * 2) }

    private static func pictureInPicture(order: [Int], width: Int, height: Int, layout: VideoLayout) -> String {
        let count = order.count
        if count == 1 { return alone(order[0], width, height) }
        let pipWidth = even(width / pipWidthFraction), margin = width / pipMarginFraction
        var parts = (1..<count).map { "[v\(order[$0])]scale=w=\(pipWidth):h=-2[p\($0)]" }
        var main = "[v0]"
        if order[0] != 0 {
            // Another source in the main picture keeps the output's size: fitted, black around.
            parts.append("[v\(order[0])]\(fit(width, height))[m]")
            main = "[m]"
        }
        for k in 1..<count {
            let step = "(overlay_w+\(margin))*\(k - 1)"
            let x = [.pipTopLeft, .pipBottomLeft].contains(layout) ? "\(margin)+\(step)" : "main_w-overlay_w-\(margin)-\(step)"
            let y = [.pipTopLeft, .pipTopRight].contains(layout) ? "\(margin)" : "main_h-overlay_h-\(margin)"
            let label = k == count - 1 ? "" : "[o\(k)]"
            parts.append("\(main)[p\(k)]overlay=x=\(x):y=\(y)\(label)")
            main = "[o\(k)]"
        }
        return parts.joined(separator: ";")
    }

    private static func cells(order: [Int], width: Int, height: Int, across: Bool) -> String {
        let count = order.count
        if count == 1 { return alone(order[0], width, height) }
        let (w, h) = across ? (even(width / count), even(height)) : (even(width), even(height / count))
        var parts = (0..<count).map { "[v\(order[$0])]\(fit(w, h))[c\($0)]" }
        let stack = across ? "hstack" : "vstack"
        parts.append((0..<count).map { "[c\($0)]" }.joined() + "\(stack)=inputs=\(count)")
        return parts.joined(separator: ";")
    }

    /// One source in the picture: as it is, or fitted when it is not the first (whose size the picture has).
    private static func alone(_ source: Int, _ width: Int, _ height: Int) -> String {
        source == 0 ? "[v0]null" : "[v\(source)]\(fit(width, height))"
    }

    /// Scales to fit `width`x`height`, aspect kept, and pads the rest black.
    private static func fit(_ width: Int, _ height: Int) -> String {
        "scale=w=\(width):h=\(height):force_original_aspect_ratio=decrease:force_divisible_by=2,pad=\(width):\(height):(ow-iw)/2:(oh-ih)/2"
    }

    /// `sampleRate`: the mix's, which the limiter's look-ahead is counted in. `always`: a graph
    /// even where one source at unity needs none (`anull`).
    static func audio(count: Int, sampleRate: Int, _ c: Composition, always: Bool = false) -> String? {
        if let graph = c.audioGraph { return graph }
        let gains = (0..<count).map { c.gains[$0] ?? 1 }
        guard always || count > 1 || c.audioFilter != nil || gains[0] != 1 else { return nil }
        var parts: [String] = []
        let inputs = gains.enumerated().map { i, gain -> String in
            guard gain != 1 else { return "[a\(i)]" }
            parts.append("[a\(i)]volume=\(gain)[g\(i)]")
            return "[g\(i)]"
        }
        var chain = inputs.joined()
        if count > 1 {
            // Summed at unity (amix would divide by the count), then limited: never clipped.
            chain += "amix=inputs=\(count):normalize=0:duration=first:dropout_transition=0,"
                + "alimiter=limit=\(limiterCeiling):attack=\(max(limiterAttackMilliseconds, limiterAttackSamples * 1000 / Double(sampleRate))):level=0"
        } else {
            chain += "anull"
        }
        if let filter = c.audioFilter { chain += "[mixed];[mixed]\(filter)" }
        parts.append(chain + "[\(audioOutput)]")
        return parts.joined(separator: ";")
    }
}
