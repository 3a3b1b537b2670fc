import CFFmpeg

/// Timestamp arithmetic on integers with their time bases: never floating point.
public enum Timestamp {
    /// The sentinel libav* uses for "no timestamp".
    public static let none: Int64 = lm_nopts_value()

    /// `value` in `from` expressed in `to`, rounded to nearest (halfway away from zero).
    @inline(__always)
    public static func rescale(_ value: Int64, from: Rational, to: Rational) -> Int64 {
        lm_rescale_q(value, from.av, to.av)
    }

    /// -1, 0 or 1 as `a` (in `aBase`) is before, at or after `b` (in `bBase`); exact.
    @inline(__always)
    public static func compare(_ a: Int64, _ aBase: Rational, _ b: Int64, _ bBase: Rational) -> Int32 {
        av_compare_ts(a, aBase.av, b, bBase.av)
    }

    /// A monotonic clock in microseconds (`av_gettime_relative`).
    public static func monotonicMicroseconds() -> Int64 { av_gettime_relative() }

    /// The wall clock in microseconds since 1970 (`av_gettime`): what pulse, alsa, x11grab and
    /// v4l2 stamp their frames with.
    public static func wallClockMicroseconds() -> Int64 { av_gettime() }
}
