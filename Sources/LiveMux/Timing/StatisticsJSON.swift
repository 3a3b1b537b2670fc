import Foundation

extension StatisticsSnapshot {
    /// One line of `--stats` (schema: docs/stats.schema.json): a JSON object with the counters,
    /// the bit rates over the media time since `previous` (the whole run when there is none),
    /// queue depths, the A/V offset and drift, latency percentiles and bytes per output. Every
    /// field that has a unit names it (`_s`, `_ms`, `_kbps`, `_x`); the rest are counts.
    /// `final` marks the last line, written once the recording has ended, over the whole run.
    public func jsonLine(previous: StatisticsSnapshot? = nil, final: Bool = false) -> String {
        Self.serialize(jsonObject(previous: previous, final: final))
    }

    /// The object of `jsonLine`, for the HTTP server to add what it knows (viewers). Its
    /// `warnings` are those said since `previous` (all those kept when there is none).
    func jsonObject(previous: StatisticsSnapshot? = nil, final: Bool = false) -> [String: Any] {
        let span = mediaTime - (previous?.mediaTime ?? 0)
        func kbps(_ now: Int64, _ before: Int64?) -> Double {
            span > 0 ? Self.rounded(Double(now - (before ?? 0)) * 8 / span / 1000) : 0
        }
        func stream(_ s: StreamStatistics, _ p: StreamStatistics?) -> [String: Any] {
            ["frames_in": s.framesIn, "packets_out": s.packetsOut, "dropped": s.dropped,
             "duplicated": s.duplicated, "timestamp_repairs": s.timestampRepairs,
             "bytes": s.bytes, "bitrate_kbps": kbps(Int64(s.bytes), p.map { Int64($0.bytes) })]
        }
        let ms = { (us: Int64) in Self.rounded(Double(us) / 1000) }
        let object: [String: Any] = [
            "final": final,
            "media_time_s": Self.rounded(mediaTime),
            "elapsed_s": Self.rounded(elapsed),
            "speed_x": Self.rounded(speed),
            "bitrate_interval_s": Self.rounded(span),
            "video": stream(video, previous?.video),
            "audio": stream(audio, previous?.audio),
            "bitrate_kbps": kbps(bytesOut, previous?.bytesOut),
            "queue_depth_packets": Dictionary(uniqueKeysWithValues: queueDepths.map { ($0.key.rawValue, $0.value) }),
            "av_offset_ms": Self.rounded(avOffsetMs),
            "drift_ms": Self.rounded(driftMs),
            "drift_corrections": driftCorrections,
            "drift_ppm": Self.rounded(driftPPM),
            "devices": devices.map {
                ["name": $0.name, "clock": $0.clock, "delay_ms": Self.rounded($0.delayMs), "failures": $0.failures,
                 "reopenings": $0.reopenings, "away_s": Self.rounded($0.awaySeconds),
                 "audio_filled_s": Self.rounded($0.audioFilledSeconds), "video_filled_frames": $0.videoFilledFrames,
                 "state": $0.state.description] as [String: Any]
            },
            "sources": sources.map {
                var source: [String: Any] = ["label": $0.label, "kind": $0.kind.rawValue, "name": $0.name, "state": $0.state.description]
                if $0.kind == .audio { source["peak_dbfs"] = $0.peakDBFS.map { Self.rounded($0) as Any } ?? NSNull() }
                return source
            },
            "latency_ms": ["p50": ms(latency.percentile(0.5)), "p95": ms(latency.percentile(0.95)),
                           "p99": ms(latency.percentile(0.99)), "max": ms(latency.maximum)],
            "latency_packets": latency.count,
            "output_bytes": Dictionary(uniqueKeysWithValues: outputBytes.map { (outputName($0.key), $0.value) }),
            "output_states": Dictionary(uniqueKeysWithValues: Set(outputBytes.keys).union(outputStates.keys).map { key in
                (outputName(key), (outputStates[key] ?? .writing).description)
            }),
            // The same by id, in the order given: what tells two outputs with one label apart.
            "outputs": outputKeys.map { key in
                ["id": key, "name": outputLabels[key] ?? key, "state": (outputStates[key] ?? .writing).description,
                 "bytes": outputBytes[key] ?? 0] as [String: Any]
            },
            "output_dropped_chunks": outputDropped,
            "video_bitrate_target_kbps": Self.rounded(Double(videoBitRate) / 1000),
            // Closed since the previous line (the last line: all of them), each as an event.
            "segments_closed": segments.dropFirst(previous?.segments.count ?? 0).map {
                ["path": $0.path, "index": $0.index, "start_s": Self.rounded($0.start), "end_s": Self.rounded($0.end),
                 "duration_s": Self.rounded($0.duration), "bytes": $0.bytes] as [String: Any]
            },
            "network": network.map {
                ["id": $0.id, "name": $0.name, "backlog_ms": Self.rounded($0.backlogMs), "link_kbps": Self.rounded($0.linkKbps),
                 "latency_skips": $0.latencySkips, "kernel_queue_seen": $0.kernelVisible, "state": $0.state.description] as [String: Any]
            },
            "warnings": Self.warningObjects(warnings.filter { $0.elapsed > previous?.elapsed ?? -1 }),
            "changes": Self.changeObjects(changes.filter { $0.elapsed > previous?.elapsed ?? -1 }),
        ]
        return object
    }

    static func warningObjects(_ warnings: [RecentWarning]) -> [[String: Any]] {
        warnings.map { ["elapsed_s": rounded($0.elapsed), "message": $0.message] }
    }

    static func changeObjects(_ changes: [JobChange]) -> [[String: Any]] {
        changes.map { change in
            var o: [String: Any] = ["elapsed_s": rounded(change.elapsed), "target": change.target, "setting": change.setting]
            switch change.value {
            case .flag(let b): o["value"] = b
            case .number(let n): o["value"] = n
            case .text(let t): o["value"] = t
            case .none: break
            }
            return o
        }
    }

    static func serialize(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func rounded(_ v: Double) -> Double { v.isFinite ? (v * 1000).rounded() / 1000 : 0 }
}
