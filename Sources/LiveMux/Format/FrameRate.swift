import FFmpeg

/// Frames per second as an exact, reduced fraction: NTSC's 29.97 is 30000/1001. The timeline
/// grid, `-t` cuts, the GOP, the encoder's time base and the container all use the fraction, so
/// nothing drifts by rounding it to a decimal.
public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
    public let numerator: Int
    public let denominator: Int

    /// Nil unless both are above zero and the reduced fraction fits libav*'s 32-bit rationals.
    public init?(_ numerator: Int, _ denominator: Int = 1) {
        guard numerator > 0, denominator > 0 else { return nil }
        var (a, b) = (numerator, denominator)
        while b != 0 { (a, b) = (b, a % b) }
        guard numerator / a <= Int(Int32.max), denominator / a <= Int(Int32.max) else { return nil }
        self.numerator = numerator / a
        self.denominator = denominator / a
    }

    /// A libav* rate; nil when it is 0/0, 0/1 or negative (unknown).
    init?(_ rate: Rational) { self.init(Int(rate.num), Int(rate.den)) }

    /// `30`, or `30000/1001`.
    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }

    var framesPerSecond: Double { Double(numerator) / Double(denominator) }

    /// The rates LiveMux records at: 1 to 240 frames per second.
    public var isSupported: Bool { numerator >= denominator && numerator <= Self.maxFramesPerSecond * denominator }
    public static let maxFramesPerSecond = 240

    var rational: Rational { Rational(Int32(numerator), Int32(denominator)) }

    /// One frame: the time base of the frame grid (1001/30000 for 30000/1001).
    var frameDuration: Rational { rational.inverted }

    /// Whole frames in `seconds`, rounded to the nearest (a `-t` cut, a GOP).
    func frames(in seconds: Double) -> Int64 {
        Int64((seconds * Double(numerator) / Double(denominator)).rounded())
    }
}
