/// A change made to the running job through the control API, kept with when it was made, so
/// that `--stats` and `/events` show it.
public struct JobChange: Sendable, Equatable {
    /// A value as the JSON writes it.
    public enum Value: Sendable, Equatable {
        case flag(Bool)
        case number(Double)
        case text(String)
        /// A change with no value (a cut).
        case none
    }

    /// Seconds since the pipeline started.
    public var elapsed: Double
    public var event: JobEvent

    /// What was changed (`JobEvent.target`).
    public var target: String { event.target }
    /// The setting (`JobEvent.setting`).
    public var setting: String { event.setting }
    public var value: Value { event.value }
}
