import Foundation

/// What the control API may change in a recording while it runs: an audio source's volume and
/// mute, a cut of the segments, an output's video bit rate where its encode is its own.
extension Pipeline: JobControl {
    /// The job as `GET /api` shows it, as a JSON object.
    public func controlDescription() -> [String: Any] {
        let s = statisticsSnapshot
        let volumes = gains?.all ?? []
        let sources = s.sources.map { source -> [String: Any] in
            var o: [String: Any] = ["id": source.label, "kind": source.kind.rawValue, "name": source.name, "state": source.state]
            if source.kind == .audio, let i = Int(source.label.dropFirst()), volumes.indices.contains(i) {
                o["volume"] = volumes[i].volume
                o["mute"] = volumes[i].muted
                o["peak_dbfs"] = source.peakDBFS ?? NSNull()
            }
            return o
        }
        let outputs = outputSpecs.indices.map { i -> [String: Any] in
            let spec = outputSpecs[i], name = spec.destination.description
            var settings: [String: Any] = [:]
            if let session = plan.sessions.first(where: { $0.destinations.contains(i) }) {
                if let v = session.video, laneFormats.indices.contains(v) {
                    let encode = plan.videoEncodes[v], format = laneFormats[v]
                    settings["vcodec"] = encode.settings.codec.rawValue
                    settings["size"] = "\(format.width)x\(format.height)"
                    settings["fps"] = format.fps.description
                    settings["vbitrate"] = laneTargets[v]?.current ?? encode.settings.bitRate
                    settings["adapts"] = encode.adapts
                }
                if let a = session.audio { settings["abitrate"] = plan.audioEncodes[a].bitRate }
            }
            return ["id": Self.outputID(i), "target": name, "format": spec.format.rawValue,
                    "state": (s.outputStates[name] ?? .writing).description, "bytes": s.outputBytes[name] ?? 0, "settings": settings]
        }
        return ["sources": sources, "outputs": outputs, "media_time_s": s.mediaTime, "segments": segments != nil]
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
        guard let i = Self.outputIndex(output), outputSpecs.indices.contains(i),
              let session = plan.sessions.first(where: { $0.destinations.contains(i) }) else {
            throw ControlError.notFound("no output \(output): the outputs are \(outputSpecs.indices.map(Self.outputID).joined(separator: ", "))")
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

    /// Outputs are named by their place among the `-o` given: o0, o1 …
    static func outputID(_ index: Int) -> String { "o\(index)" }
    static func outputIndex(_ id: String) -> Int? { id.hasPrefix("o") ? Int(id.dropFirst()) : nil }
}
