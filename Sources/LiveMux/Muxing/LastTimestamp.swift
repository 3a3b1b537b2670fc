import FFmpeg

/// The last timestamp a stream accepted: a packet must come later, compared exactly across time
/// bases (a caller may change its timescale between packets).
struct LastTimestamp {
    private var last: (value: Int64, base: Rational)?

    /// True, and remembered, when `t` (in `base`) is not negative and later than the last.
    mutating func advance(to t: Int64, in base: Rational) -> Bool {
        guard t >= 0, last.map({ Timestamp.compare(t, base, $0.value, $0.base) > 0 }) ?? true else { return false }
        last = (t, base)
        return true
    }
}
