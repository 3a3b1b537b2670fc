/// Where a URL output's connection is: `--stats` `network[].state`, the dashboard, `GET /api`.
public enum ConnectionState: Sendable, Equatable, CustomStringConvertible {
    case connecting
    case live
    /// Waiting before reconnect attempt `attempt` of `of` (`--reconnect`).
    case reconnecting(attempt: Int, of: Int)
    /// Every attempt failed, or the peer refused what a retry would send again.
    case givenUp
    /// Its trailer sent and the connection closed.
    case ended

    /// As `--stats` says it (docs/stats.schema.json).
    public var description: String {
        switch self {
        case .connecting: return "connecting"
        case .live: return "live"
        case .reconnecting(let attempt, let of): return "reconnecting \(attempt) of \(of)"
        case .givenUp: return "given up"
        case .ended: return "ended"
        }
    }
}
