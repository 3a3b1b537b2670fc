import Foundation

/// What the control API may change in a recording while it runs: an audio source's volume and
/// mute, a cut of the segments, an output's video bit rate where its encode is its own.
extension Pipeline: JobControl {
    /// The job as `GET /api` shows it.
    public var controlDescription: JobDescription {
        let s = statisticsSnapshot
        let volumes = gains?.all ?? []
        let sources = s.sources.compactMap { source -> JobDescription.Source? in
            guard let id = SourceID(source.label) else { return nil }
            var o = JobDescription.Source(id: id, name: source.name, state: source.state)
            if id.kind == .audio, volumes.indices.contains(id.index) {
                (o.volume, o.mute, o.peakDBFS) = (volumes[id.index].volume, volumes[id.index].muted, source.peakDBFS)
            }
            return o
        }
        let (shape, main) = layout.withLock { ($0.layout, $0.main) }
        return JobDescription(sources: sources, outputs: live.all.map { describe($0, s) },
                              layout: .init(layout: shape, main: SourceID(.video, main)),
                              mediaTime: s.mediaTime, placedTime: s.video.placedTime, segments: segments != nil)
    }

    /// Audio source `source`'s (`a0`, `a1` …) linear gain in the mix and/or mute, from its next frame.
    public func setAudio(_ source: String, volume: Double? = nil, muted: Bool? = nil) throws {
        if gains == nil && !opened.audio.isEmpty { throw Self.notLive }
        guard let gains, let id = SourceID(source), id.kind == .audio, gains.all.indices.contains(id.index) else {
            let known = (gains?.all.indices).map { $0.map { "a\($0)" }.joined(separator: ", ") } ?? "none"
            throw ControlError.notFound("no audio source \(source): the audio sources are \(known)")
        }
        guard volume != nil || muted != nil else { throw ControlError.badRequest(nil, "give the field to change: {\"mute\": true} or {\"volume\": 0.5}") }
        if let volume, !(0...ControlAPI.maxVolume).contains(volume) {
            throw ControlError.badRequest("volume", ControlAPI.volumeRange)
        }
        _ = gains.set(id.index, volume: volume, muted: muted)
        if let volume { statistics.changed(.volume(id, volume)) }
        if let muted { statistics.changed(.mute(id, muted)) }
    }

    /// Cuts every file output's segment at the next keyframe (a forced one), as SIGUSR1 does.
    public func cutSegments() throws {
        guard let segments else {
            throw ControlError.conflict(nil, "no output is cut into segments: start the recording with --segment-time (or --segment-size)")
        }
        // With segments on every file output is cut: one still writing must be left.
        guard live.all.contains(where: { !$0.removed && $0.spec.destination.filePath != nil }) else {
            throw ControlError.conflict(nil, "no output cut into segments is left: every file output was removed")
        }
        segments.requestCut()
        statistics.changed(.segmentsCut)
    }

    /// Output `output`'s (`o0`, `o1` … in the order given, then those added) video bit rate, in
    /// bits per second, from its next frame; refused when it shares its encode or follows its link.
    public func setVideoBitRate(output id: String, _ bitRate: Int) throws {
        guard BitRates.range.contains(bitRate) else {
            throw ControlError.badRequest("vbitrate", "vbitrate is bits per second from \(BitRates.described): 800000 or \"800k\"")
        }
        let output = try live.output(id)
        guard !output.removed, statistics.outputState(output.key)?.isGoing == true else { throw ControlError.conflict(nil, "\(id) has ended") }
        guard let video = output.video else { throw ControlError.conflict("vbitrate", "\(id) has no video") }
        if video.adapts {
            throw ControlError.conflict("vbitrate", "\(id)'s bit rate follows its link: start it with --no-adaptive-bitrate to set it by hand")
        }
        let others = live.sharingVideo(with: output)
        guard others.isEmpty else {
            throw ControlError.conflict("vbitrate", "\(id) shares its video encode with \(others.joined(separator: ", ")): give it a bit rate of its own"
                                        + " (--vbitrate before its -o at the start, \"vbitrate\" when it is added), so its encode is its own")
        }
        guard let dial = video.lane.target as? BitRateDial else { throw Self.notLive }
        dial.set(bitRate)
        statistics.changed(.videoBitRate(output.id, bitRate))
    }

    /// How long a removal's answer waits for the output or source to end: a push's close may take
    /// `NetworkSink.closeGraceSeconds`.
    static let endingWaitSeconds = NetworkSink.closeGraceSeconds + 2

    private static let notLive = ControlError.conflict(nil, "this job was started without live control: set RecordConfiguration.liveControl (livemux: --control-key-file)")

    /// `GET /api`'s entry for one output.
    private func describe(_ output: JobOutput, _ s: StatisticsSnapshot) -> JobDescription.Output {
        var settings = JobDescription.Output.Settings()
        if let video = output.video {
            let format = video.lane.format
            settings.vcodec = video.settings.codec.rawValue
            settings.size = "\(format.width)x\(format.height)"
            settings.fps = format.fps.description
            settings.vbitrate = video.lane.target?.current ?? video.settings.bitRate
            settings.adapts = video.adapts
        }
        settings.abitrate = output.audio?.settings.bitRate
        var o = JobDescription.Output(id: output.id, target: output.label, format: output.spec.format, state: s.outputStates[output.key] ?? .writing,
                                      bytes: s.outputBytes[output.key] ?? 0, settings: settings)
        // What setVideoBitRate takes: an encode of its own, dialled by hand.
        if let video = output.video { o.vbitrateSettable = !video.adapts && video.lane.target is BitRateDial && live.sharingVideo(with: output).isEmpty }
        return o
    }

    /// A new output, as `-o` would make it, from its next keyframe; its description.
    public func addOutput(_ spec: OutputSpec, overwrite: Bool = false) throws -> JobDescription.Output {
        guard controlled else { throw Self.notLive }
        let output = try live.add(spec, overwrite: overwrite)
        statistics.changed(.outputAdded(output.id))
        return describe(output, statisticsSnapshot)
    }

    /// Ends an output, given or added, while the others go on: its file is finished, its push
    /// closed. The last one is refused: a job with no output left would end.
    public func removeOutput(_ id: String) throws {
        guard controlled else { throw Self.notLive }
        let removed = try live.remove(id)
        statistics.changed(.outputRemoved(removed))
        // Answered once it ended (its trailer written, its push closed), so the answer says so.
        _ = statistics.waitUntilOutputEnded(removed.description, seconds: Self.endingWaitSeconds)
    }

    /// Where the video sources go and which is the main picture (fitted to the picture's size),
    /// from the next frame.
    public func setLayout(_ shape: VideoLayout?, main: String?) throws {
        guard shape != nil || main != nil else { throw ControlError.badRequest(nil, "give the field to change: {\"main\": \"v1\"} or {\"layout\": \"pip\"}") }
        let videoCount = addedSources.count(.video)
        let index = try main.map { text -> Int in
            guard let id = SourceID(text), id.kind == .video, (0..<videoCount).contains(id.index) else {
                throw ControlError.badRequest("main", "main is a video source: \((0..<videoCount).map { SourceID(.video, $0).description }.joined(separator: ", "))")
            }
            return id.index
        }
        guard let compositor = stages.video as? VideoCompositor, compositor.canChange, videoCount > 1 else {
            throw ControlError.conflict(nil, videoCount > 1 ? "the picture is the --filter-complex graph's: change it there" : "the job has one video source: there is no layout to change")
        }
        if let index, layout.withLock({ $0.removed.contains(index) }) {
            throw ControlError.conflict("main", "v\(index) was removed")
        }
        let next = layout.withLock { l in
            l = (shape ?? l.layout, index ?? l.main, l.removed)
            return l
        }
        compositor.change(layout: next.layout, main: next.main, hidden: next.removed)
        if let shape { statistics.changed(.layout(shape)) }
        if let index { statistics.changed(.mainPicture(SourceID(.video, index))) }
    }

    /// Ends a source while the recording goes on: a video source leaves the picture, an audio
    /// source's place in the mix is silence from then. v0 and a0 time the picture and the mix.
    public func removeSource(_ id: String) throws {
        guard controlled else { throw Self.notLive }
        guard let sourceID = SourceID(id), (0..<addedSources.count(sourceID.kind)).contains(sourceID.index) else {
            let all = (0..<addedSources.count(.video)).map { SourceID(.video, $0) } + (0..<addedSources.count(.audio)).map { SourceID(.audio, $0) }
            throw ControlError.notFound("no source \(id): the sources are \(all.map(\.description).joined(separator: ", "))")
        }
        let (kind, index) = (sourceID.kind, sourceID.index)
        guard index > 0 else {
            let instead = kind == .video ? "make another the main picture" : "mute it"
            throw ControlError.conflict(nil, "\(id) times the \(kind == .video ? "picture" : "mix"): it stays while the job runs (\(instead))")
        }
        // A given source's stop is the job's; an added one has its own.
        let (source, stop): (CaptureSource, StopSignal)
        let list = kind == .video ? opened.video : opened.audio
        if list.indices.contains(index) {
            guard let i = sources.firstIndex(where: { $0 === list[index] }) else { throw ControlError.notFound("no source \(id)") }
            (source, stop) = (list[index], sourceStops[i])
        } else {
            guard let added = addedSources.source(id) else { throw ControlError.notFound("no source \(id)") }
            (source, stop) = (added.source, added.stop)
        }
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
        } else if stop.isRequested {
            throw ControlError.conflict(nil, "\(id) was removed already")
        }
        stop.request()
        source.interrupt()
        statistics.changed(.sourceRemoved(sourceID))
        // Answered once its thread stopped, so the answer says `ended`.
        _ = source.waitUntilEnded(seconds: Self.endingWaitSeconds)
    }

    /// A source added while the job runs, opened as `--video` / `--audio` would open it: a video
    /// source goes where the layout puts the next one, an audio source into the mix at unity,
    /// from the next frame. Its description (with its id: v2, a1 …).
    public func addSource(_ spec: SourceSpec, kind: StreamKind) throws -> JobDescription.Source {
        guard controlled else { throw Self.notLive }
        let id = try addedSources.add(spec, kind: kind)
        return controlDescription.source(id) ?? JobDescription.Source(id: id, name: spec.maskedDescription, state: .live)
    }

    /// A URL output closes its connection and connects again at once, from the newest keyframe.
    public func reconnectOutput(_ id: String) throws {
        let output = try live.output(id)
        guard output.spec.destination.isNetwork else { throw ControlError.conflict(nil, "\(id) is not a URL output: it has no connection") }
        guard !output.removed, let connected = output.session.reconnect(output.id) else { throw ControlError.conflict(nil, "\(id) has ended") }
        guard connected else { throw ControlError.conflict(nil, "\(id) is not connected now: it reconnects by itself (GET /api shows its state)") }
        statistics.changed(.reconnect(output.id))
    }
}
