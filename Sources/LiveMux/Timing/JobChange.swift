/// A change made to the running job through the control API, kept with when it was made, so
/// that `--stats` and `/events` show it.
public struct JobChange: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case flag(Bool)
        case number(Double)
        case text(String)
        /// A change with no value (a cut).
        case none
    }

    /// Seconds since the pipeline started.
    public var elapsed: Double
    /// What was changed: a source (`a1`), an output (`o0`), `segments` or `layout`.
    public var target: String
    /// The setting: `mute`, `volume`, `vbitrate`, `cut`, `added`, `removed`, `reconnect`, `layout`, `main`.
    public var setting: String
    public var value: Value
}
