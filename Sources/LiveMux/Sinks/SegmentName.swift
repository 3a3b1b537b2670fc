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
