#if canImport(Glibc)
import Glibc
#endif

/// A segmented output's name pattern, read as ffmpeg's segment muxer reads it: either numbered,
/// `%d` or `%03d` being the segment's number (from 0), or, when it has any other field, a
/// strftime pattern of the segment's start in local time (`%Y%m%d-%H%M%S`; `%d` is then the day,
/// as with ffmpeg's `-strftime 1`). `%%` is a percent sign in both.
public struct SegmentName: Sendable, Equatable {
    public let pattern: String

    public init(_ pattern: String) { self.pattern = pattern }

    /// A piece of the pattern: text (`%%` already made `%`), the number (`%d`, `%03d`: its width and
    /// padding), or a strftime field.
    private enum Part {
        case text(Character)
        case number(width: Int, pad: Character)
        case time
    }

    private var parts: [Part] {
        var parts: [Part] = []
        var chars = Array(pattern)[...]
        while let c = chars.popFirst() {
            guard c == "%", let next = chars.first else {
                parts.append(.text(c))
                continue
            }
            let digits = chars.prefix { $0.isASCII && $0.isNumber }
            if next == "%" {
                parts.append(.text("%"))
                chars.removeFirst()
            } else if chars.dropFirst(digits.count).first == "d" {
                parts.append(.number(width: Int(String(digits)) ?? 0, pad: digits.first == "0" ? "0" : " "))
                chars.removeFirst(digits.count + 1)
            } else {
                parts.append(.time)
                chars.removeFirst()
            }
        }
        return parts
    }

    /// Whether the pattern has a number or time field: without one, every segment has one name.
    public var hasFields: Bool { parts.contains { if case .text = $0 { false } else { true } } }

    /// Whether names come from the clock (strftime) rather than from the number.
    private var isTimePattern: Bool { parts.contains { if case .time = $0 { true } else { false } } }

    /// Whether segments are numbered (`%d`, `%03d`), so every name a run may produce is known at
    /// its start; a dated name is known only when its segment begins.
    public var isNumbered: Bool { hasFields && !isTimePattern }

    /// The number of the segment this numbered pattern names `name`, if it names one: its
    /// digits where the first number field is, when the pattern makes exactly `name` of them
    /// (`p01.asf` is no name of `p%03d.asf`). Nil for a dated pattern.
    public func number(of name: String) -> Int? {
        guard isNumbered, let field = parts.firstIndex(where: { if case .number = $0 { true } else { false } }) else { return nil }
        let prefix = String(parts[..<field].compactMap { if case .text(let c) = $0 { c } else { nil } })
        guard name.hasPrefix(prefix) else { return nil }
        // A space-padded field (`%3d`) has its spaces before the digits.
        let rest = name.dropFirst(prefix.count).drop { $0 == " " }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard let n = Int(digits), path(index: n, wallClock: 0) == name else { return nil }
        return n
    }

    /// The name tried instead of `path` when a file has that name: `-1`, `-2` … before its
    /// extension (`p002.asf`: `p002-1.asf`), as file managers and browsers number a copy.
    static func alternative(to path: String, _ attempt: Int) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        // A leading dot is a hidden file's name, not an extension.
        guard let dot = path[slash...].lastIndex(of: "."), dot > slash else { return "\(path)-\(attempt)" }
        return "\(path[..<dot])-\(attempt)\(path[dot...])"
    }

    /// The name of segment `index` starting at `wallClock` (µs since 1970).
    public func path(index: Int, wallClock: Int64) -> String {
        guard isTimePattern else {
            return parts.map { part in
                switch part {
                case .text(let c): return String(c)
                case .number(let width, let pad):
                    let number = String(index)
                    return String(repeating: pad, count: max(0, width - number.count)) + number
                case .time: return ""
                }
            }.joined()
        }
        var seconds = time_t(wallClock / 1_000_000), local = tm()
        guard localtime_r(&seconds, &local) != nil else { return pattern }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = strftime(&buffer, buffer.count, pattern, &local)
        // 0 is an empty name or one longer than any path: keep the fields unexpanded rather than lose it.
        guard n > 0 else { return pattern }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
