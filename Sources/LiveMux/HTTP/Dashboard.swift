import Foundation
import POSIX

/// What the HTTP server shows a person or a script about the recording: `/stats` (the `--stats`
/// object of the last second, with the viewers), `/events` (the same as server-sent events, one a
/// second), `/history` (the plotted fields of the last five minutes), `/snapshot.jpg` (the newest
/// video frame) and the page at `/` (`DashboardPage`).
///
/// The statistics are sampled once a second on the loop thread (a few lock rounds, and the few
/// plotted numbers kept: a page opened late still plots the last five minutes); the JSON is made
/// only when someone reads it, once per sample however many do, and the JPEG only when asked, at
/// most once a second per width. `attach` is called before the server starts; everything
/// else belongs to the loop thread.
final class Dashboard: @unchecked Sendable {
    private struct Sources {
        var statistics: @Sendable () -> StatisticsSnapshot
        var frames: FrameTap?
    }
    private let sources: Locked<Sources>
    // The loop's state.
    private var latest: StatisticsSnapshot?
    private var previous: StatisticsSnapshot?
    private var nextSample = Date.distantPast
    private var line: String?
    /// The plotted fields of each second, oldest first (`historySeconds` at most).
    private var history: [[String: Any]] = []
    /// Pictures made, by width (0: the stream's size), with when.
    private var snapshots: [Int: (made: Date, jpeg: [UInt8])] = [:]
    /// A connection waiting for a picture, and whether it asked for the head only (`HEAD`).
    typealias SnapshotWaiter = (token: UInt64, head: Bool)
    /// Connections waiting for a picture, by width.
    private var snapshotWaiters: [Int: [SnapshotWaiter]] = [:]
    private var maker: SnapshotMaker?

    static let paths: Set<String> = ["/stats", "/events", "/history", "/snapshot.jpg"]
    static let sampleSeconds = 1.0
    /// What `/history` keeps: the page's plots span five minutes.
    static let historySeconds = 300
    /// Event readers served at once (a page each); past it 503.
    static let maxEventReaders = 64
    /// How long a picture is served again instead of making a new one.
    static let snapshotMaxAgeSeconds = 1.0
    /// `?width=N` the snapshot takes.
    static let snapshotWidths = 16...3840
    /// A snapshot request not answered by then gets 503 (the maker waits 1 s for a frame).
    static let snapshotTimeoutSeconds = 3.0

    init(statistics: @escaping @Sendable () -> StatisticsSnapshot) {
        sources = Locked(Sources(statistics: statistics))
    }

    /// The recording's whole statistics (the pipeline's, across its sessions) and its video frames.
    func attach(statistics: @escaping @Sendable () -> StatisticsSnapshot, frames: FrameTap?) {
        sources.withLock { $0 = Sources(statistics: statistics, frames: frames) }
    }

    var hasVideo: Bool { sources.withLock { $0.frames != nil } }

    /// Samples the statistics once a second; true when it did (a new event is due).
    func tick(now: Date) -> Bool {
        guard now >= nextSample else { return false }
        // A second after the last one, or after now when the loop fell behind (or at the first).
        let due = nextSample.addingTimeInterval(Self.sampleSeconds)
        nextSample = due > now ? due : now.addingTimeInterval(Self.sampleSeconds)
        let statistics = sources.withLock { $0.statistics }
        previous = latest
        let sample = statistics()
        latest = sample
        line = nil
        history.append(Self.plotted(sample.jsonObject(previous: previous)))
        if history.count > Self.historySeconds { history.removeFirst() }
        return true
    }

    /// The fields the page plots, under their names in the stats object.
    private static func plotted(_ o: [String: Any]) -> [String: Any] {
        func pick(_ key: String, _ fields: [String]) -> [String: Any] {
            (o[key] as? [String: Any] ?? [:]).filter { fields.contains($0.key) }
        }
        return ["elapsed_s": o["elapsed_s"] ?? 0, "media_time_s": o["media_time_s"] ?? 0, "bitrate_kbps": o["bitrate_kbps"] ?? 0,
                "av_offset_ms": o["av_offset_ms"] ?? 0, "video": pick("video", ["bitrate_kbps"]),
                "audio": pick("audio", ["bitrate_kbps"]), "latency_ms": pick("latency_ms", ["p99"]),
                "network": (o["network"] as? [[String: Any]] ?? []).map { n in
                    n.filter { ["name", "link_kbps", "backlog_ms"].contains($0.key) }
                }]
    }

    /// `/history`: a JSON array of the plotted fields of each second, oldest first.
    var historyJSON: String {
        let data = (try? JSONSerialization.data(withJSONObject: history, options: [.sortedKeys])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The object of the last second as one JSON line: the `--stats` object, the viewers, and
    /// every warning and change kept (not only the last second's: a page opened later shows them too).
    func statsLine(viewers: StreamIndex) -> String {
        if let line { return line }
        guard let latest else { return "{}" }
        var object = latest.jsonObject(previous: previous)
        object["warnings"] = StatisticsSnapshot.warningObjects(latest.warnings)
        object["changes"] = StatisticsSnapshot.changeObjects(latest.changes)
        object["viewers"] = ["count": viewers.viewers, "max": viewers.maxViewers,
                             "streams": Dictionary(uniqueKeysWithValues: viewers.streams.map { ($0.path, $0.viewers) })] as [String: Any]
        let made = StatisticsSnapshot.serialize(object)
        line = made
        return made
    }

    /// One server-sent event carrying `statsLine`.
    func event(viewers: StreamIndex) -> [UInt8] { Array("data: \(statsLine(viewers: viewers))\n\n".utf8) }

    // MARK: Snapshots

    /// A picture `width` wide made within the last second, else nil after asking for one
    /// (`wake` wakes the loop when it is ready) and noting `waiter` as waiting for it.
    func snapshot(width: Int, for waiter: SnapshotWaiter, now: Date, wake: @escaping @Sendable () -> Void) -> [UInt8]? {
        if let s = snapshots[width], now.timeIntervalSince(s.made) < Self.snapshotMaxAgeSeconds { return s.jpeg }
        guard let frames = sources.withLock({ $0.frames }) else { return nil }
        if maker == nil { maker = SnapshotMaker(tap: frames, wake: wake) }
        if snapshotWaiters[width] == nil { maker?.request(width: width) }
        snapshotWaiters[width, default: []].append(waiter)
        return nil
    }

    /// The pictures made since the last call, with the connections waiting for each.
    func finishedSnapshots(now: Date) -> [(result: SnapshotMaker.Result, waiters: [SnapshotWaiter])] {
        guard let maker else { return [] }
        // Older pictures are never served again: keep none, whatever widths were asked for.
        snapshots = snapshots.filter { now.timeIntervalSince($0.value.made) < Self.snapshotMaxAgeSeconds }
        return maker.takeFinished().map { width, result in
            if case .jpeg(let bytes) = result { snapshots[width] = (now, bytes) }
            return (result, snapshotWaiters.removeValue(forKey: width) ?? [])
        }
    }

    /// Ends the snapshot thread, if one ever started.
    func stop() { maker?.stop() }
}
