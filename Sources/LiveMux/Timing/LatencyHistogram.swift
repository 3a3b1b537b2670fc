/// Latencies (µs) counted into fixed bins, so a run of any length uses the same memory and the
/// percentiles are still close: 0.1 ms bins up to 100 ms, 10 ms bins up to 10 s, then one bin for
/// anything longer (reported as the largest value seen). Pure logic, no locking (Statistics locks).
public struct LatencyHistogram: Sendable, Equatable {
    static let fineWidth: Int64 = 100, fineLimit: Int64 = 100_000
    static let coarseWidth: Int64 = 10_000, coarseLimit: Int64 = 10_000_000
    static let fineBins = Int(fineLimit / fineWidth)
    static let binCount = fineBins + Int((coarseLimit - fineLimit) / coarseWidth) + 1

    private var bins = [Int](repeating: 0, count: LatencyHistogram.binCount)
    public private(set) var count = 0
    public private(set) var maximum: Int64 = 0
    public private(set) var minimum: Int64 = .max

    init() {}

    mutating func add(_ microseconds: Int64) {
        let v = max(0, microseconds)
        bins[Self.bin(v)] += 1
        count += 1
        maximum = max(maximum, v)
        minimum = min(minimum, v)
    }

    static func bin(_ v: Int64) -> Int {
        if v < fineLimit { return Int(v / fineWidth) }
        if v < coarseLimit { return fineBins + Int((v - fineLimit) / coarseWidth) }
        return binCount - 1
    }

    /// The middle of a bin (µs).
    static func value(ofBin i: Int) -> Int64 {
        if i < fineBins { return Int64(i) * fineWidth + fineWidth / 2 }
        return fineLimit + Int64(i - fineBins) * coarseWidth + coarseWidth / 2
    }

    /// The latency (µs) that `fraction` (0…1) of the samples do not exceed, to within half a bin;
    /// never outside the smallest and largest seen. 0 when empty.
    public func percentile(_ fraction: Double) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (i, n) in bins.enumerated() where n > 0 {
            seen += n
            if seen >= rank {
                if i == Self.binCount - 1 { return maximum }
                return min(max(Self.value(ofBin: i), minimum), maximum)
            }
        }
        return maximum
    }
}
