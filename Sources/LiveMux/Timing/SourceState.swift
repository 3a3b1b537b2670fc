/// Where a source is: `--stats` `sources[].state` and `devices[].state`, the dashboard, the
/// progress line, `GET /api`.
public enum SourceState: String, Sendable, Equatable, CustomStringConvertible {
    case live
    /// A device that failed, being filled (its last frame or silence) and opened again.
    case reopening
    /// A device after the first of its kind that stayed away past `--device-timeout`.
    case leftOut = "left out"
    /// It delivered its last frame (a file that ended, a source removed live).
    case ended

    public var description: String { rawValue }
}
