/// A warning the recording said (an output reconnecting, a device away), kept with when it was
/// said so that `--stats` and the dashboard can show it.
public struct RecentWarning: Sendable, Equatable {
    /// Seconds since the pipeline started.
    public var elapsed: Double
    public var message: String
}
