/// What became of one output (a file, stdout, a URL) so far: `--stats`'s `output_states`, the
/// dashboard and the progress line.
public enum OutputState: Sendable, Equatable {
    case writing
    /// Its trailer written and its sink closed: complete.
    case finished
    /// It stopped (while the others went on, or as the last one), and why.
    case failed(String)

    /// As `--stats` says it (docs/stats.schema.json): `writing`, `finished`, `failed: why`.
    public var description: String {
        switch self {
        case .writing: return "writing"
        case .finished: return "finished"
        case .failed(let reason): return "failed: \(reason)"
        }
    }

    public var isFailed: Bool { if case .failed = self { return true } else { return false } }
}
