import Foundation

/// What the control API may change in a recording while it runs: an audio source's volume and
/// mute, a cut of the segments, an output's video bit rate where its encode is its own.
extension Pipeline: JobControl {
    func controlDescription() -> [String: Any] {
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

    func setAudio(_ source: String, volume: Double?, muted: Bool?) throws {
        guard let gains, source.hasPrefix("a"), let i = Int(source.dropFirst()), gains.all.indices.contains(i) else {
            let known = (gains?.all.indices).map { $0.map { "a\($0)" }.joined(separator: ", ") } ?? "none"
            throw ControlError.notFound("no audio source \(source): the audio sources are \(known)")
        }
        guard volume != nil || muted != nil else { throw ControlError.badRequest(nil, "give the field to change: {\"mute\": true} or {\"volume\": 0.5}") }
        _ = gains.set(i, volume: volume, muted: muted)
        statistics.warned("control: \(source)" + [volume.map { " volume \($0)" }, muted.map { $0 ? " muted" : " unmuted" }].compactMap { $0 }.joined())
    }

    func cutSegments() throws {
        guard let segments else {
            throw ControlError.conflict(nil, "no output is cut into segments: start the recording with --segment-time (or --segment-size)")
        }
        segments.requestCut()
        statistics.warned("control: segments cut at the next keyframe")
    }

    func setVideoBitRate(output: String, _ bitRate: Int) throws {
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
        guard let dial = laneTargets[v] as? BitRateDial else { throw ControlError.conflict("vbitrate", "\(output)'s bit rate is fixed") }
        dial.set(bitRate)
        statistics.warned("control: \(output) video bit rate \(bitRate / 1000)k")
    }

    /// Outputs are named by their place among the `-o` given: o0, o1 …
    static func outputID(_ index: Int) -> String { "o\(index)" }
    static func outputIndex(_ id: String) -> Int? { id.hasPrefix("o") ? Int(id.dropFirst()) : nil }
}
