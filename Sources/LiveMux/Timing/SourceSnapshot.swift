/// One source in a `StatisticsSnapshot`: what `--stats` and the progress line name.
public struct SourceSnapshot: Sendable, Equatable {
    /// `v0`, `v1` … `a0`, `a1` …, as graphs name it.
    public var label: String
    public var kind: StreamKind
    /// The source as given (credentials masked).
    public var name: String
    public var state: SourceState
    /// Audio: the peak of the last whole second (dBFS, −100 is silence); nil before one.
    public var peakDBFS: Double?
    /// Audio: muted through the control API (its level is then not heard in the mix).
    public var muted = false
}
