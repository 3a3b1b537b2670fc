import Foundation

/// What the control API may change in a recording while it runs: an audio source's volume and
/// mute, a cut of the segments, an output's video bit rate where its encode is its own.
extension Pipeline: JobControl {
    /// The job as `GET /api` shows it, as a JSON object.
    public func controlDescription() -> [String: Any] {
        let s = statisticsSnapshot
        let volumes = gains?.all ?? []
        let sources = s.sources.map { source -> [String: Any] in
            var o: [String: Any] = ["id": source.label, "kind": source.kind.rawValue, "name": source.name, "state": source.state.description]
            if source.kind == .audio, let i = Int(source.label.dropFirst()), volumes.indices.contains(i) {
                o["volume"] = volumes[i].volume
                o["mute"] = volumes[i].muted
                o["peak_dbfs"] = source.peakDBFS ?? NSNull()
            }
            return o
        }
        var outputs = outputSpecs.indices.map { i -> [String: Any] in
            let session = plan.sessions.first { $0.destinations.contains(i) }
            let v = session?.video.flatMap { laneFormats.indices.contains($0) ? $0 : nil }
            return Self.describe(Self.outputID(i), outputSpecs[i], s,
                                 video: v.map { (plan.videoEncodes[$0].settings, laneFormats[$0], laneTargets[$0], plan.videoEncodes[$0].adapts) },
                                 audio: session?.audio.map { plan.audioEncodes[$0] })
        }
        for o in live?.all ?? [] {
            outputs.append(Self.describe(o.id, o.spec, s, video: o.video.map { ($0.settings, $0.lane.format, $0.lane.target, false) },
                                         audio: o.audio?.settings))
        }
        let (shape, main) = layout.withLock { ($0.layout, $0.main) }
        return ["sources": sources, "outputs": outputs, "media_time_s": s.mediaTime, "segments": segments != nil,
                "layout": ["layout": shape.rawValue, "main": "v\(main)"]]
    }

    /// Audio source `source`'s (`a0`, `a1` …) linear gain in the mix and/or mute, from its next frame.
    public func setAudio(_ source: String, volume: Double? = nil, muted: Bool? = nil) throws {
        if gains == nil && !opened.audio.isEmpty { throw Self.notLive }
        guard let gains, source.hasPrefix("a"), let i = Int(source.dropFirst()), gains.all.indices.contains(i) else {
            let known = (gains?.all.indices).map { $0.map { "a\($0)" }.joined(separator: ", ") } ?? "none"
            throw ControlError.notFound("no audio source \(source): the audio sources are \(known)")
        }
        guard volume != nil || muted != nil else { throw ControlError.badRequest(nil, "give the field to change: {\"mute\": true} or {\"volume\": 0.5}") }
        if let volume, !(0...ControlAPI.maxVolume).contains(volume) {
            throw ControlError.badRequest("volume", "volume is a linear gain from 0 to \(Int(ControlAPI.maxVolume)): 1 is as captured, 0.5 is -6 dB")
        }
        _ = gains.set(i, volume: volume, muted: muted)
        if let volume { statistics.changed(source, "volume", .number(volume)) }
        if let muted { statistics.changed(source, "mute", .flag(muted)) }
    }

    /// Cuts every file output's segment at the next keyframe (a forced one), as SIGUSR1 does.
    public func cutSegments() throws {
        guard let segments else {
            throw ControlError.conflict(nil, "no output is cut into segments: start the recording with --segment-time (or --segment-size)")
        }
        segments.requestCut()
        statistics.changed("segments", "cut", .none)
    }

    /// Output `output`'s (`o0`, `o1` … in the order given) video bit rate, in bits per second,
    /// from its next frame; refused when it shares its encode or follows its link.
    public func setVideoBitRate(output: String, _ bitRate: Int) throws {
        guard ControlAPI.bitRates.contains(bitRate) else {
            throw ControlError.badRequest("vbitrate", "vbitrate is bits per second from 16k to 100M: 800000 or \"800k\"")
        }
        if let added = live?.all.first(where: { $0.id == output }) {
            let others = (live?.all ?? []).filter { $0.id != output && !$0.removed && $0.video?.lane === added.video?.lane }.map(\.id)
            guard let lane = added.video?.lane, !laneTargets.contains(where: { $0 === lane.target }), others.isEmpty,
                  let dial = lane.target as? BitRateDial else {
                throw ControlError.conflict("vbitrate", "\(output) shares its video encode\(others.isEmpty ? " with the outputs given at the start" : " with " + others.joined(separator: ", ")): add it with a vbitrate of its own, so its encode is its own")
            }
            dial.set(bitRate)
            statistics.changed(output, "vbitrate", .number(Double(bitRate)))
            return
        }
        guard let i = Self.outputIndex(output), outputSpecs.indices.contains(i),
              let session = plan.sessions.first(where: { $0.destinations.contains(i) }) else {
            let ids = outputSpecs.indices.map(Self.outputID) + (live?.all.map(\.id) ?? [])
            throw ControlError.notFound("no output \(output): the outputs are \(ids.joined(separator: ", "))")
        }
        guard let v = session.video, laneTargets.indices.contains(v) else { throw ControlError.conflict("vbitrate", "\(output) has no video") }
        if plan.videoEncodes[v].adapts {
            throw ControlError.conflict("vbitrate", "\(output)'s bit rate follows its link: start it with --no-adaptive-bitrate to set it by hand")
        }
        let sharing = plan.sessions.filter { $0.video == v }
        let others = sharing.flatMap(\.destinations).filter { $0 != i }.map(Self.outputID) + (sharing.contains(where: \.viewers) ? ["the live viewers"] : [])
        guard others.isEmpty else {
            throw ControlError.conflict("vbitrate", "\(output) shares its video encode with \(others.joined(separator: ", ")): give it its own --vbitrate after its -o at the start, so its encode is its own")
        }
        guard let dial = laneTargets[v] as? BitRateDial else { throw Self.notLive }
        dial.set(bitRate)
        statistics.changed(output, "vbitrate", .number(Double(bitRate)))
    }

    private static let notLive = ControlError.conflict(nil, "this job was started without live control: set RecordConfiguration.liveControl (livemux: --control-key-file)")

    /// `GET /api`'s object for one output.
    private static func describe(_ id: String, _ spec: OutputSpec, _ s: StatisticsSnapshot,
                                 video: (settings: VideoSettings, format: VideoFormat, target: BitRateTarget?, adapts: Bool)?,
                                 audio: AudioSettings?) -> [String: Any] {
        let name = spec.destination.description
        var settings: [String: Any] = [:]
        if let video {
            settings["vcodec"] = video.settings.codec.rawValue
            settings["size"] = "\(video.format.width)x\(video.format.height)"
            settings["fps"] = video.format.fps.description
            settings["vbitrate"] = video.target?.current ?? video.settings.bitRate
            settings["adapts"] = video.adapts
        }
        if let audio { settings["abitrate"] = audio.bitRate }
        return ["id": id, "target": name, "format": spec.format.rawValue, "state": (s.outputStates[name] ?? .writing).description,
                "bytes": s.outputBytes[name] ?? 0, "settings": settings]
    }

    /// A new output, as `-o` would make it, from its next keyframe; its description.
    public func addOutput(_ spec: OutputSpec, overwrite: Bool = false) throws -> [String: Any] {
        guard let live else { throw Self.notLive }
        let busy = outputSpecs.indices.filter { i in !removedOutputs.withLock { $0.contains(i) } }.map { outputSpecs[$0].destination }
        let id = try live.add(spec, overwrite: overwrite, busy: busy)
        statistics.changed(id, "added", .none)
        return (controlDescription()["outputs"] as? [[String: Any]])?.first { $0["id"] as? String == id } ?? ["id": id]
    }

    /// Ends an output while the others go on: its file is finished, its push closed. The last
    /// one is refused: a job with no output left would end.
    public func removeOutput(_ id: String) throws {
        guard let live else { throw Self.notLive }
        let given = outputSpecs.count - removedOutputs.withLock { $0.count }
        let added = live.all.filter { !$0.removed }.count
        let viewers = plan.sessions.contains(where: \.viewers)
        if given + added <= 1 && !viewers, live.all.contains(where: { $0.id == id && !$0.removed }) || Self.outputIndex(id).map(outputSpecs.indices.contains) == true {
            throw ControlError.conflict(nil, "\(id) is the job's last output: add another first, or stop the job to end it")
        }
        if try live.remove(id) {
            statistics.changed(id, "removed", .none)
            return
        }
        guard let i = Self.outputIndex(id), outputSpecs.indices.contains(i),
              let k = plan.sessions.firstIndex(where: { $0.destinations.contains(i) }) else { throw ControlError.notFound("no output \(id)") }
        let name = outputSpecs[i].destination.description
        if let problem = sessions[k].removalProblem(name) { throw ControlError.conflict(nil, "\(id) cannot end alone: \(problem)") }
        guard removedOutputs.withLock({ $0.insert(i).inserted }) else { throw ControlError.conflict(nil, "\(id) is already ending") }
        sessions[k].removeOutput(named: name)
        statistics.changed(id, "removed", .none)
    }

    /// Where the video sources go and which is the main picture (fitted to the picture's size),
    /// from the next frame.
    public func setLayout(_ shape: VideoLayout?, main: String?) throws {
        guard shape != nil || main != nil else { throw ControlError.badRequest(nil, "give the field to change: {\"main\": \"v1\"} or {\"layout\": \"pip\"}") }
        let index = try main.map { id -> Int in
            guard id.hasPrefix("v"), let i = Int(id.dropFirst()), opened.video.indices.contains(i) else {
                throw ControlError.badRequest("main", "main is a video source: \(opened.video.indices.map { "v\($0)" }.joined(separator: ", "))")
            }
            return i
        }
        guard let compositor = stages.video as? VideoCompositor, compositor.canChange, opened.video.count > 1 else {
            throw ControlError.conflict(nil, opened.video.count > 1 ? "the picture is the --filter-complex graph's: change it there" : "the job has one video source: there is no layout to change")
        }
        if let index, layout.withLock({ $0.removed.contains(index) }) {
            throw ControlError.conflict("main", "v\(index) was removed")
        }
        let next = layout.withLock { l in
            l = (shape ?? l.layout, index ?? l.main, l.removed)
            return l
        }
        compositor.change(layout: next.layout, main: next.main, hidden: next.removed)
        if let shape { statistics.changed("layout", "layout", .text(shape.rawValue)) }
        if let index { statistics.changed("layout", "main", .text("v\(index)")) }
    }

    /// Ends a source while the recording goes on: a video source leaves the picture, an audio
    /// source's place in the mix is silence from then. v0 and a0 time the picture and the mix.
    public func removeSource(_ id: String) throws {
        guard live != nil else { throw Self.notLive }
        let kind: StreamKind? = id.hasPrefix("v") ? .video : id.hasPrefix("a") ? .audio : nil
        let list = kind == .video ? opened.video : opened.audio
        guard let kind, let index = Int(id.dropFirst()), list.indices.contains(index), "\(id.first!)\(index)" == id else {
            throw ControlError.notFound("no source \(id): the sources are \((opened.video.indices.map { "v\($0)" } + opened.audio.indices.map { "a\($0)" }).joined(separator: ", "))")
        }
        guard index > 0 else {
            let instead = kind == .video ? "make another the main picture" : "mute it"
            throw ControlError.conflict(nil, "\(id) times the \(kind == .video ? "picture" : "mix"): it stays while the job runs (\(instead))")
        }
        let source = list[index]
        guard let i = sources.firstIndex(where: { $0 === source }) else { throw ControlError.notFound("no source \(id)") }
        if kind == .video {
            guard let compositor = stages.video as? VideoCompositor, compositor.canChange else {
                throw ControlError.conflict(nil, "the picture is the --filter-complex graph's: change it there")
            }
            let next = try layout.withLock { l -> (layout: VideoLayout, main: Int, removed: Set<Int>) in
                guard l.removed.insert(index).inserted else { throw ControlError.conflict(nil, "\(id) was removed already") }
                if l.main == index { l.main = 0 }
                return l
            }
            compositor.change(layout: next.layout, main: next.main, hidden: next.removed)
        } else if sourceStops[i].isRequested {
            throw ControlError.conflict(nil, "\(id) was removed already")
        }
        sourceStops[i].request()
        source.interrupt()
        statistics.changed(id, "removed", .none)
    }

    /// A URL output closes its connection and connects again at once, from the newest keyframe.
    public func reconnectOutput(_ id: String) throws {
        let given = Self.outputIndex(id).flatMap { i in outputSpecs.indices.contains(i) ? outputSpecs[i] : nil }
        guard let spec = given ?? live?.all.first(where: { $0.id == id })?.spec else { throw ControlError.notFound("no output \(id)") }
        guard spec.destination.isNetwork else { throw ControlError.conflict(nil, "\(id) is not a URL output: it has no connection") }
        let name = spec.destination.description
        let answers = (sessions + (live?.sessions ?? [])).compactMap { $0.reconnect(named: name) }
        guard let connected = answers.first else { throw ControlError.conflict(nil, "\(id) has ended") }
        guard connected else { throw ControlError.conflict(nil, "\(id) is not connected now: it reconnects by itself (GET /api shows its state)") }
        statistics.changed(id, "reconnect", .none)
    }

    /// Outputs are named by their place among the `-o` given: o0, o1 …
    static func outputID(_ index: Int) -> String { "o\(index)" }
    static func outputIndex(_ id: String) -> Int? { id.hasPrefix("o") ? Int(id.dropFirst()) : nil }
}
