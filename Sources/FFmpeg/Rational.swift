import CFFmpeg

/// A time base or rate as a fraction, like `AVRational`.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    public var num: Int32
    public var den: Int32

    public init(_ num: Int32, _ den: Int32) {
        self.num = num
        self.den = den
    }

    init(_ r: AVRational) { self.init(r.num, r.den) }
    var av: AVRational { AVRational(num: num, den: den) }

    public static let milliseconds = Rational(1, 1000)
    public static let microseconds = Rational(1, 1_000_000)

    public var description: String { "\(num)/\(den)" }
    public var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
    public var inverted: Rational { Rational(den, num) }
}
