import Foundation
import LiveMux

/// Parsers for command-line values. Each throws a usage error naming the option and what it takes.
enum Values {
    /// `2M`, `800k`, `128000` → bits per second.
    static func bitRate(_ text: String, option: String) throws -> Int {
        let t = text.trimmingCharacters(in: .whitespaces)
        var multiplier = 1.0
        var number = Substring(t)
        switch t.last {
        case "k", "K": multiplier = 1e3; number = number.dropLast()
        case "m", "M": multiplier = 1e6; number = number.dropLast()
        case "g", "G": multiplier = 1e9; number = number.dropLast()
        default: break
        }
        guard let v = Double(number), v.isFinite, v > 0, v * multiplier >= Double(BitRates.range.lowerBound),
              v * multiplier <= Double(BitRates.range.upperBound) else {
            throw UsageError("\(option) takes a bit rate such as 2M, 800k or 128000 (\(BitRates.described)), not '\(text)'")
        }
        return Int((v * multiplier).rounded())
    }

    /// A whole number in a range.
    static func integer(_ text: String, option: String, range: ClosedRange<Int>) throws -> Int {
        guard let v = Int(text), range.contains(v) else {
            throw UsageError("\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return v
    }

    /// Frames per second, 1 to 240, as an exact fraction: `30`, `30000/1001`, or a decimal. A
    /// decimal that is N/1.001 rounded to its digits, for a whole N (29.97, 23.976, 59.94), is the
    /// NTSC rate N·1000/1001, as ffmpeg's `ntsc` is; any other decimal is exact (12.5 is 25/2).
    static func frameRate(_ text: String, option: String) throws -> FrameRate {
        let refusal = UsageError("\(option) takes frames per second from 1 to \(FrameRate.maxFramesPerSecond): a whole number (30), a fraction"
                                 + " (30000/1001) or a decimal (29.97, which is 30000/1001), not '\(text)'")
        let rate: FrameRate?
        if let slash = text.firstIndex(of: "/") {
            rate = Int(text[..<slash]).flatMap { n in Int(text[text.index(after: slash)...]).flatMap { FrameRate(n, $0) } }
        } else {
            rate = decimalRate(text)
        }
        guard let rate, rate.isSupported else { throw refusal }
        return rate
    }

    /// Digits after the point a decimal rate may have (microframes: far finer than any real rate).
    private static let maxDecimals = 6

    /// `30`, `12.5`, `29.97`: digits with at most one point.
    private static func decimalRate(_ text: String) -> FrameRate? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty, whole.count <= 3, fraction.count <= maxDecimals, parts.count == 1 || !fraction.isEmpty,
              (whole + fraction).allSatisfy({ $0.isASCII && $0.isNumber }), let digits = Int(whole + fraction) else { return nil }
        var scale = 1
        for _ in 0..<fraction.count { scale *= 10 }
        // NTSC: N/1.001 rounded to the digits given is the text, and the text is not N itself.
        let n = (digits * 1001 + 500 * scale) / (1000 * scale)
        if fraction.count >= 2, digits % scale != 0, (n * 1000 * scale * 2 + 1001) / (1001 * 2) == digits {
            return FrameRate(n * 1000, 1001)
        }
        return FrameRate(digits, scale)
    }

    /// Seconds, greater than zero.
    static func seconds(_ text: String, option: String) throws -> Double {
        guard let v = Double(text), v.isFinite, v > 0, v <= 1e7 else {
            throw UsageError("\(option) takes a number of seconds greater than 0, such as 10 or 2.5, not '\(text)'")
        }
        return v
    }

    /// A duration greater than zero: seconds (`10`, `2.5`), with a unit (`90s`, `10m`, `1h`), or
    /// `HH:MM:SS` as ffmpeg writes durations.
    static func duration(_ text: String, option: String) throws -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var seconds: Double?
        if text.contains(":") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Double($0) }
            if parts.count <= 3, parts.allSatisfy({ $0 != nil && $0! >= 0 }) { seconds = parts.reduce(0.0) { $0 * 60 + $1! } }
        } else if let last = text.last, let unit = units[last] {
            seconds = Double(text.dropLast()).map { $0 * unit }
        } else {
            seconds = Double(text)
        }
        guard let seconds, seconds.isFinite, seconds > 0, seconds <= 1e7 else {
            throw UsageError("\(option) takes a duration greater than 0: seconds (10, 2.5), 90s, 10m, 1h or 01:30:00, not '\(text)'")
        }
        return seconds
    }

    /// A size in bytes: `500000`, or with k, M, G (1024-based: 500M is 500 MiB).
    static func byteSize(_ text: String, option: String) throws -> Int64 {
        let units: [Character: Double] = ["k": 1024, "K": 1024, "m": 1_048_576, "M": 1_048_576, "g": 1_073_741_824, "G": 1_073_741_824]
        let (number, unit) = text.last.flatMap { units[$0] }.map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard let v = Double(number), v.isFinite, v * unit >= 1, v * unit <= 1e15 else {
            throw UsageError("\(option) takes a size in bytes such as 500M, 2G or 1000000, not '\(text)'")
        }
        return Int64((v * unit).rounded())
    }

    /// `WxH`, both even (4:2:0 video needs even sizes).
    static func size(_ text: String, option: String) throws -> (Int, Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (16...8192).contains(w), (16...8192).contains(h) else {
            throw UsageError("\(option) takes WIDTHxHEIGHT from 16x16 to 8192x8192, such as 1280x720, not '\(text)'")
        }
        guard w % 2 == 0, h % 2 == 0 else {
            throw UsageError("\(option) needs an even width and height for 4:2:0 video, not '\(text)' (try \(w + w % 2)x\(h + h % 2))")
        }
        return (w, h)
    }

    /// `KEY=VALUE`.
    static func keyValue(_ text: String, option: String) throws -> (String, String) {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw UsageError("\(option) takes KEY=VALUE, such as video_size=640x480, not '\(text)'")
        }
        return (String(text[..<eq]), String(text[text.index(after: eq)...]))
    }

    static func choice<T: RawRepresentable & CaseIterable>(_ text: String, option: String, as: T.Type) throws -> T where T.RawValue == String {
        guard let v = T(rawValue: text.lowercased()) else {
            let names = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("\(option) takes one of \(names), not '\(text)'")
        }
        return v
    }
}
