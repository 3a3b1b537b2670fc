import Foundation

extension RecordingReport {
    /// An SVG timeline: bit rate over media time with a red line at every video keyframe, and
    /// below it the A/V DTS offset (last video DTS − last audio DTS) as the file is read front to
    /// back, with the interleaving verdict. Plain SVG 1.1, no scripts, no external resources.
    public var svg: String {
        let width = 960.0, left = 70.0, right = 20.0, plotWidth = width - left - right
        let top1 = 50.0, height1 = 170.0, top2 = 280.0, height2 = 170.0
        var out: [String] = []
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        out.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"500\" viewBox=\"0 0 \(Int(width)) 500\" font-family=\"sans-serif\" font-size=\"12\">")
        out.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>")
        out.append("<text x=\"\(f(left))\" y=\"22\" font-size=\"15\">\(Self.escape((path as NSString).lastPathComponent)): \(formatName), \(String(format: "%.3f", duration)) s</text>")

        // Panel 1: bit rate over time and keyframes.
        let interval = duration > 20 ? 1.0 : 0.25
        let rates = bitrate(interval: interval)
        let peak = max(rates.max() ?? 0, 1)
        let span = max(Double(rates.count) * interval, interval)  // whole buckets, so the last fits
        let x = { (t: Double) in left + (t - self.start) / span * plotWidth }
        out.append("<g id=\"bitrate\">")
        out.append("<text x=\"\(f(left))\" y=\"\(f(top1 - 8))\">bit rate (kbit/s, per \(interval) s of DTS); red: video keyframes</text>")
        out.append("<rect x=\"\(f(left))\" y=\"\(f(top1))\" width=\"\(f(plotWidth))\" height=\"\(f(height1))\" fill=\"none\" stroke=\"#999\"/>")
        if let v = streams.first(where: { $0.kind == .video }) {
            for k in v.keyframes {
                out.append("<line class=\"keyframe\" x1=\"\(f(x(k)))\" y1=\"\(f(top1))\" x2=\"\(f(x(k)))\" y2=\"\(f(top1 + height1))\" stroke=\"#d22\" stroke-width=\"1\"><title>keyframe at \(String(format: "%.3f", k)) s</title></line>")
            }
        }
        let ratePoints = rates.enumerated().map { i, r in
            "\(f(x(start + (Double(i) + 0.5) * interval))),\(f(top1 + height1 - r / peak * height1))"
        }
        if !ratePoints.isEmpty {
            out.append("<polyline fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.5\" points=\"\(ratePoints.joined(separator: " "))\"/>")
        }
        out.append("<text x=\"\(f(left - 5))\" y=\"\(f(top1 + 10))\" text-anchor=\"end\">\(Int(peak.rounded()))</text>")
        out.append("<text x=\"\(f(left - 5))\" y=\"\(f(top1 + height1))\" text-anchor=\"end\">0</text>")
        let ticks = max(1, Int(span / 10))
        for second in stride(from: 0, through: Int(span), by: ticks) {
            let t = start + Double(second)
            out.append("<text x=\"\(f(x(t)))\" y=\"\(f(top1 + height1 + 15))\" text-anchor=\"middle\">\(second) s</text>")
        }
        out.append("</g>")

        // Panel 2: A/V DTS offset in file order.
        let offsets = offsetTrace.map(\.offset)
        let limit = max(offsets.map(abs).max() ?? 0, 0.05)
        let mid = top2 + height2 / 2
        let count = max(packets.count - 1, 1)
        out.append("<g id=\"interleave\">")
        let verdict = isWellInterleaved ? "good" : "BAD"
        out.append("<text x=\"\(f(left))\" y=\"\(f(top2 - 8))\">A/V DTS offset in file order (last video − last audio, ms); interleaving: \(verdict), largest distance \(String(format: "%.3f", largestDistance)) s, \(inversions.count) inversions</text>")
        out.append("<rect x=\"\(f(left))\" y=\"\(f(top2))\" width=\"\(f(plotWidth))\" height=\"\(f(height2))\" fill=\"none\" stroke=\"#999\"/>")
        out.append("<line x1=\"\(f(left))\" y1=\"\(f(mid))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(mid))\" stroke=\"#ccc\"/>")
        // At most ~2000 points: enough for the eye, small enough for any viewer.
        let step = max(1, offsetTrace.count / 2000)
        let tracePoints = stride(from: 0, to: offsetTrace.count, by: step).map { i -> String in
            let (n, o) = offsetTrace[i]
            return "\(f(left + Double(n) / Double(count) * plotWidth)),\(f(mid - o / limit * height2 / 2))"
        }
        if !tracePoints.isEmpty {
            out.append("<polyline fill=\"none\" stroke=\"\(isWellInterleaved ? "#2e7d32" : "#d22")\" stroke-width=\"1\" points=\"\(tracePoints.joined(separator: " "))\"/>")
        }
        for inv in inversions.prefix(500) {
            let px = left + Double(inv.packet) / Double(count) * plotWidth
            out.append("<circle class=\"inversion\" cx=\"\(f(px))\" cy=\"\(f(top2 + height2 - 4))\" r=\"2\" fill=\"#d22\"/>")
        }
        out.append("<text x=\"\(f(left - 5))\" y=\"\(f(top2 + 10))\" text-anchor=\"end\">+\(Int((limit * 1000).rounded()))</text>")
        out.append("<text x=\"\(f(left - 5))\" y=\"\(f(mid + 4))\" text-anchor=\"end\">0</text>")
        out.append("<text x=\"\(f(left - 5))\" y=\"\(f(top2 + height2))\" text-anchor=\"end\">−\(Int((limit * 1000).rounded()))</text>")
        out.append("<text x=\"\(f(left))\" y=\"\(f(top2 + height2 + 15))\">first packet</text>")
        out.append("<text x=\"\(f(left + plotWidth))\" y=\"\(f(top2 + height2 + 15))\" text-anchor=\"end\">last packet (file order)</text>")
        out.append("</g>")
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
