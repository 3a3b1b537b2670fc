import Foundation

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
        guard let v = Double(number), v.isFinite, v > 0, v * multiplier >= 1000, v * multiplier <= 1e9 else {
            throw UsageError("\(option) takes a bit rate such as 2M, 800k or 128000 (1k to 1G), not '\(text)'")
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

    /// Seconds, greater than zero.
    static func seconds(_ text: String, option: String) throws -> Double {
        guard let v = Double(text), v.isFinite, v > 0, v <= 1e7 else {
            throw UsageError("\(option) takes a number of seconds greater than 0, such as 10 or 2.5, not '\(text)'")
        }
        return v
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

/// A mistake on the command line: exit code 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
