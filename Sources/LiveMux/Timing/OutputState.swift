/// What became of one output (a file, stdout, a URL) so far: `--stats`'s `output_states`, the
/// dashboard and the progress line.
public enum OutputState: Sendable, Equatable {
    /// A URL output before its first connection took the header, or connecting again as asked.
    case connecting
    case writing
    /// A URL output waiting before reconnect attempt `attempt` of `of`.
    case reconnecting(attempt: Int, of: Int)
    /// Its trailer written and its sink closed: complete.
    case finished
    /// It stopped (while the others went on, or as the last one), and why.
    case failed(String)

    /// As `--stats` says it (docs/stats.schema.json): `writing`, `finished`, `failed: why`.
    public var description: String {
        switch self {
        case .connecting: return "connecting"
        case .writing: return "writing"
        case .reconnecting(let attempt, let of): return "reconnecting \(attempt) of \(of)"
        case .finished: return "finished"
        case .failed(let reason): return "failed: \(reason)"
        }
    }

    public var isFailed: Bool { if case .failed = self { return true } else { return false } }

    /// Whether it is still going: connecting, writing or reconnecting.
    public var isGoing: Bool {
        switch self {
        case .connecting, .writing, .reconnecting: return true
        case .finished, .failed: return false
        }
    }
}
