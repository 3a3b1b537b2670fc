#if canImport(Glibc)
import Glibc
#endif

/// A segmented output's name pattern, read as ffmpeg's segment muxer reads it: `%d` or `%03d` is
/// the segment's number (from 0), strftime's fields (`%Y%m%d-%H%M%S`) its start in local time,
/// `%%` a percent sign.
public struct SegmentName: Sendable, Equatable {
    public let pattern: String

    public init(_ pattern: String) { self.pattern = pattern }

    /// Whether the pattern has a number or time field: without one, every segment has one name.
    public var hasFields: Bool {
        var chars = Array(pattern)[...]
        while let c = chars.popFirst() {
            guard c == "%", let next = chars.first else { continue }
            if next == "%" { chars.removeFirst() } else { return true }
        }
        return false
    }

    /// The name of segment `index` starting at `wallClock` (µs since 1970).
    public func path(index: Int, wallClock: Int64) -> String {
        // The numbers first; every other field is left for strftime.
        var text = ""
        var chars = Array(pattern)[...]
        while let c = chars.popFirst() {
            guard c == "%" else {
                text.append(c)
                continue
            }
            let digits = chars.prefix(while: \.isASCII).prefix(while: \.isNumber)
            if chars.dropFirst(digits.count).first == "d" {
                let width = Int(String(digits)) ?? 0
                let number = String(index)
                let pad = digits.first == "0" ? "0" : " "
                text += String(repeating: pad, count: max(0, width - number.count)) + number
                chars.removeFirst(digits.count + 1)
            } else {
                text.append("%")
                if let next = chars.popFirst() { text.append(next) }  // `%%` stays whole for strftime
            }
        }
        var seconds = time_t(wallClock / 1_000_000), local = tm()
        guard localtime_r(&seconds, &local) != nil else { return text }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = strftime(&buffer, buffer.count, text, &local)
        // 0 is an empty name or one longer than any path: keep the fields unexpanded rather than lose it.
        guard n > 0 else { return text }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
