/// How several sources of a kind become the one stream, and the filters before the encoders.
public struct Composition: Sendable, Equatable {
    /// Where video sources after the first go.
    public var layout: VideoLayout = .pip
    /// Linear gain per audio source by its number (a0 is 0); 0 mutes it, a source not listed is
    /// mixed at unity.
    public var gains: [Int: Double] = [:]
    /// A libavfilter chain run after the composition (`--vf`) or the mix (`--af`).
    public var videoFilter: String?, audioFilter: String?
    /// Graphs whose inputs are the sources' labels (`[v0]`, `[a1]` …) and whose output is
    /// `[vout]` or `[aout]` (`--filter-complex`): they replace the default composition or mix.
    public var videoGraph: String?, audioGraph: String?
    public init() {}
}
