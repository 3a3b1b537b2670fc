extension AudioSpecificConfig {
    /// Sample rate and channel count from a config's first fields (ISO 14496-3 1.6.2.1): object
    /// type (5 bits, or 6 more after 31), frequency index (4 bits, or an explicit 24-bit rate
    /// after 15), channel configuration (4 bits; 7 means 8 channels, 0 a layout elsewhere: 0).
    /// Nil when the config is shorter or names a reserved frequency index.
    static func read(_ config: [UInt8]) -> (sampleRate: Int, channels: Int)? {
        var bits = config.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } << (8 * UInt64(8 - min(config.count, 8)))
        var available = 8 * min(config.count, 8)
        func take(_ n: Int) -> Int? {
            guard n <= available else { return nil }
            defer { bits <<= UInt64(n); available -= n }
            return Int(bits >> UInt64(64 - n))
        }
        guard let objectType = take(5), objectType != 31 || take(6) != nil, let index = take(4) else { return nil }
        let rate: Int
        if index == 15 {
            guard let explicit = take(24) else { return nil }
            rate = explicit
        } else {
            guard index < sampleRates.count else { return nil }
            rate = sampleRates[index]
        }
        guard let configuration = take(4) else { return nil }
        return (rate, configuration == 7 ? 8 : configuration)
    }
}
