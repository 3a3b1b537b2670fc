/// When and how often a failed network output is retried: exponential backoff from `firstDelay`,
/// capped at `maxDelay`, with jitter, for at most `attempts` consecutive failures.
public struct ReconnectPolicy: Sendable, Equatable {
    public var firstDelay: Double = 0.5
    public var maxDelay: Double = 10
    /// Reconnect attempts after a failure before the output is given up; 0 never retries.
    public var attempts = 10
    /// Each wait is the backoff scaled by a factor in [1 − jitter, 1 + jitter).
    static let jitter = 0.2

    public init(firstDelay: Double = 0.5, maxDelay: Double = 10, attempts: Int = 10) {
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
        self.attempts = attempts
    }

    /// The wait before reconnect attempt `n` (1-based): `min(maxDelay, firstDelay · 2^(n−1))`,
    /// scaled by a jitter around it (±20%) so many outputs of one failed server do not retry in
    /// lockstep, and the first wait is about the `firstDelay` asked for. `random` is in [0, 1).
    func delay(beforeAttempt n: Int, random: Double) -> Double {
        let exponent = Double(min(max(n - 1, 0), 30))
        let base = min(maxDelay, firstDelay * pow2(exponent))
        return base * (1 - Self.jitter + 2 * Self.jitter * min(max(random, 0), 1))
    }

    private func pow2(_ e: Double) -> Double {
        var v = 1.0
        for _ in 0..<Int(e) { v *= 2 }
        return v
    }
}
