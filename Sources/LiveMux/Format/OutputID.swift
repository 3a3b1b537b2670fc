/// An output's identity in its job: `o0`, `o1` … in the order given, then those added while it
/// runs. Every per-output figure (state, bytes, link) is kept by it; the output's target, masked,
/// is only a label, and two pushes to one service with two keys have the same one.
public struct OutputID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let index: Int

    public init(_ index: Int) { self.index = index }

    /// `o3` → 3; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("o"), let index = Int(text.dropFirst()), index >= 0, text == "o\(index)" else { return nil }
        self.index = index
    }

    public var description: String { "o\(index)" }

    public static func < (a: OutputID, b: OutputID) -> Bool { a.index < b.index }
}
