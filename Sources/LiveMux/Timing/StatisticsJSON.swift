import Foundation

extension StatisticsSnapshot {
    /// One line of `--stats`: a JSON object with the counters, the bit rates over the interval
    /// since `previous` (by media time; the whole run when there is none), queue depths, the A/V
    /// offset and drift, latency percentiles and bytes per output.
    public func jsonLine(previous: StatisticsSnapshot? = nil) -> String {
        let span = mediaTime - (previous?.mediaTime ?? 0)
        func kbps(_ now: Int, _ before: Int?) -> Double {
            span > 0 ? rounded(Double(now - (before ?? 0)) * 8 / span / 1000) : 0
        }
        func stream(_ s: StreamStatistics, _ p: StreamStatistics?) -> [String: Any] {
            ["frames_in": s.framesIn, "packets_out": s.packetsOut, "dropped": s.dropped,
             "duplicated": s.duplicated, "timestamp_repairs": s.timestampRepairs,
             "bytes": s.bytes, "bitrate_kbps": kbps(s.bytes, p?.bytes)]
        }
        let ms = { (us: Int64) in Self.rounded(Double(us) / 1000) }
        let object: [String: Any] = [
            "media_time": Self.rounded(mediaTime),
            "elapsed": Self.rounded(elapsed),
            "speed": Self.rounded(speed),
            "video": stream(video, previous?.video),
            "audio": stream(audio, previous?.audio),
            "bitrate_kbps": span > 0 ? Self.rounded(Double(bytesOut - (previous?.bytesOut ?? 0)) * 8 / span / 1000) : 0,
            "queue_depth": Dictionary(uniqueKeysWithValues: queueDepths.map { ($0.key.rawValue, $0.value) }),
            "av_offset_ms": Self.rounded(avOffsetMs),
            "drift_ms": Self.rounded(driftMs),
            "drift_corrections": driftCorrections,
            "drift_ppm": Self.rounded(driftPPM),
            "devices": devices.map { ["name": $0.name, "clock": $0.clock, "delay_ms": Self.rounded($0.delayMs)] as [String: Any] },
            "latency_ms": ["p50": ms(latency.percentile(0.5)), "p95": ms(latency.percentile(0.95)),
                           "p99": ms(latency.percentile(0.99)), "max": ms(latency.maximum), "packets": latency.count],
            "output_bytes": outputBytes,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private func rounded(_ v: Double) -> Double { Self.rounded(v) }
    static func rounded(_ v: Double) -> Double { v.isFinite ? (v * 1000).rounded() / 1000 : 0 }
}
