/// A source's identity in its job: `v0`, `v1` … for video and `a0`, `a1` … for audio, in the
/// order given, then those added while it runs. v0 and a0 time the picture and the mix.
public struct SourceID: Hashable, Sendable, CustomStringConvertible {
    public let kind: StreamKind
    public let index: Int

    public init(_ kind: StreamKind, _ index: Int) {
        self.kind = kind
        self.index = index
    }

    /// `v1` → video 1, `a0` → audio 0; nil for anything else (`a01`, `x1`, `a-1`).
    public init?(_ text: String) {
        guard let first = text.first, let index = Int(text.dropFirst()), index >= 0 else { return nil }
        switch first {
        case "v": kind = .video
        case "a": kind = .audio
        default: return nil
        }
        self.index = index
        guard description == text else { return nil }
    }

    public var description: String { "\(kind == .video ? "v" : "a")\(index)" }
}
