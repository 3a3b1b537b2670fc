import Foundation
import FFmpeg

/// How `Pipeline.init` builds each part of a recording from its plan: the encodes, the mux
/// sessions, the sources' consumers, and the registries of outputs and sources that change live.
extension Pipeline {
    /// What each stream is encoded at, and the graphs between the sources and the encoders. Each
    /// stream keeps its first source's format unless the options ask for another; a graph that
    /// makes another size (side by side, a crop) sets the picture's, unless --size.
    static func formats(_ config: RecordConfiguration, _ opened: RecordingSources, live: Bool, report: @escaping @Sendable (String) -> Void) throws
        -> (video: VideoFormat?, audio: AudioFormat?, graphs: SourceGraphs) {
        let sourceFormat = { (kind: StreamKind) in (kind == .video ? opened.video : opened.audio).first?.format ?? SourceFormat() }
        var video = config.recordVideo ? VideoFormat.resolve(config.video, source: sourceFormat(.video), report: report) : nil
        let audio = config.recordAudio ? AudioFormat.resolve(config.audio, source: sourceFormat(.audio), report: report) : nil
        let graphs = try SourceGraphs(opened, composition: config.composition, videoFormat: video, audioFormat: audio, live: live)
        if let size = graphs.videoOutputSize, config.video.width == nil {
            (video!.width, video!.height) = (size.width & ~1, size.height & ~1)
            if let warning = oddSizeWarning(size, config.composition) { report(warning) }
        }
        return (video, audio, graphs)
    }

    /// One encode per distinct setting (`plan`), each feeding the sessions that use it; only the
    /// first URL output's (and those that ask the same) follows the link, and with the control
    /// API (`dialled`) every other lane's bit rate can be dialled.
    static func encodes(_ plan: EncodePlan, videoFormat: VideoFormat?, audioFormat: AudioFormat?, queues: [MuxQueue], adaptive: AdaptiveBitrate?,
                        dialled: Bool, statistics: Statistics, quiet: Bool) throws -> (video: [VideoLane], audio: [AudioLane]) {
        let tee = { (uses: (EncodePlan.Session) -> Bool) in
            let feeds = plan.sessions.indices.filter { uses(plan.sessions[$0]) }
            return PacketTee(queues: feeds.map { queues[$0] }, sessions: feeds, statistics: statistics)
        }
        let video: [VideoLane] = try videoFormat.map { base in
            try plan.videoEncodes.enumerated().map { i, encode in
                let settings = encode.settings
                var format = base
                if let w = settings.width, let h = settings.height { (format.width, format.height) = (w, h) }
                if let fps = settings.fps { format.fps = fps }
                let target: BitRateTarget? = encode.adapts ? adaptive : dialled ? BitRateDial(settings.bitRate) : nil
                return try VideoLane(settings: settings, format: format, tee: tee { $0.video == i }, target: target,
                                     statistics: statistics, quiet: quiet)
            }
        } ?? []
        let audio: [AudioLane] = try audioFormat.map { format in
            try plan.audioEncodes.enumerated().map { i, settings in
                try AudioLane(settings: settings, format: format, tee: tee { $0.audio == i }, statistics: statistics)
            }
        } ?? []
        return (video, audio)
    }

    /// One mux session per pair of lanes the plan uses, with the outputs it groups there. Live
    /// (pipe) ASF gets small packets: a payload waits in the open ASF packet until later ones fill
    /// it, so 1400 bytes instead of 3200 cut that wait (docs/latency.md).
    static func muxSessions(_ plan: EncodePlan, outputs: [Outputs], queues: [MuxQueue], lanes: (video: [VideoLane], audio: [AudioLane]),
                            adaptive: AdaptiveBitrate?, statistics: Statistics, report: @escaping @Sendable (String) -> Void) throws -> [MuxSession] {
        try outputs.indices.map { i in
            var streams: [ContainerWriter.StreamDescription] = []
            if let v = plan.sessions[i].video, !lanes.video.isEmpty { streams.append(try lanes.video[v].streamDescription()) }
            if let a = plan.sessions[i].audio, !lanes.audio.isEmpty { streams.append(try lanes.audio[a].streamDescription()) }
            return try MuxSession(queue: queues[i], outputs: outputs[i], streams: streams,
                                  streamingASFPacketSize: MuxSession.liveASFPacketSize, statistics: statistics, index: i,
                                  adaptive: plan.sessions[i].video.map { plan.videoEncodes[$0].adapts } == true ? adaptive : nil, report: report)
        }
    }

    /// Gives each source its stream's consumers: v0's the video encoder's thread (returned), the
    /// others their inputs to the picture or the mix. Video encodes on a thread of its own,
    /// overlapping capture; audio is cheap enough to encode on its capture thread. A live screen or
    /// camera is never kept waiting by a slow frame's encode: a grab that waits is taken late, and
    /// shows a later instant than its slot.
    static func attach(_ opened: RecordingSources, to stages: SourceStages, timeline: Timeline) -> EncoderThread? {
        let liveVideo = opened.all.contains { $0.isLive && $0.streamKinds.contains(.video) }
        let videoConsumer = stages.video.map {
            EncoderThread($0, name: "livemux-encode-video", capacity: liveVideo ? Self.liveVideoQueueFrames : 1)
        }
        for source in opened.all {
            let v = opened.video.firstIndex { $0 === source }, a = opened.audio.firstIndex { $0 === source }
            let video: FrameConsumer? = v.flatMap { $0 == 0 ? videoConsumer as FrameConsumer? : stages.videoInputs[$0 - 1] }
            let audio: FrameConsumer? = a.flatMap { $0 == 0 ? stages.audio as FrameConsumer? : stages.audioInputs[$0 - 1] }
            source.attach(video: video, audio: audio, timeline: timeline)
        }
        return videoConsumer
    }

    /// Every output given, as the control API finds it (its session and encodes), and what an
    /// output added live is made from.
    static func liveOutputs(_ config: RecordConfiguration, _ plan: EncodePlan, lanes: (video: [VideoLane], audio: [AudioLane]), sessions: [MuxSession],
                            formats: (video: VideoFormat?, audio: AudioFormat?), encoders: (video: VideoEncoder?, audio: AudioEncoder?),
                            statistics: Statistics, quiet: Bool, report: @escaping @Sendable (String) -> Void) -> LiveOutputs {
        let videoEncodes = zip(plan.videoEncodes, lanes.video).map { LiveOutputs.VideoEncode(settings: $0.settings, adapts: $0.adapts, lane: $1) }
        let audioEncodes = zip(plan.audioEncodes, lanes.audio).map { LiveOutputs.AudioEncode(settings: $0, lane: $1) }
        let given = config.outputs.destinations.indices.compactMap { i -> JobOutput? in
            guard let k = plan.sessions.firstIndex(where: { $0.destinations.contains(i) }) else { return nil }
            return JobOutput(id: OutputID(i), spec: config.outputs.destinations[i], session: sessions[k],
                             video: plan.sessions[k].video.map { videoEncodes[$0] }, audio: plan.sessions[k].audio.map { audioEncodes[$0] },
                             addedQueue: nil)
        }
        let viewers = plan.sessions.first(where: \.viewers)
        return LiveOutputs(
            .init(video: config.recordVideo ? config.video : nil, audio: config.recordAudio ? config.audio : nil, videoFormat: formats.video,
                  audioFormat: formats.audio, videoEncoder: encoders.video, audioEncoder: encoders.audio, outputs: config.outputs,
                  queueCapacity: config.queueCapacity, statistics: statistics, quiet: quiet, report: report),
            given: given, video: videoEncodes, audio: audioEncodes, servesViewers: viewers != nil,
            viewersVideo: viewers?.video.map { lanes.video[$0] }, firstSession: plan.sessions.count)
    }

    /// The registry of sources added live: opened as the job's later sources are, joining the
    /// picture or the mix, on the job's clock, their threads run by the first session.
    static func liveSources(_ config: RecordConfiguration, _ opened: RecordingSources, stages: SourceStages, graphs: SourceGraphs, gains: AudioGains?,
                            audioFormat: AudioFormat?, paced: Bool, wallClock: Bool, firstSession: MuxSession, statistics: Statistics,
                            report: @escaping @Sendable (String) -> Void) -> LiveSources {
        let reopening = DeviceReopening.later(timeout: config.deviceTimeout)
        return LiveSources(.init(
            open: { spec, kind in
                try CaptureSource(spec: spec, video: kind == .video, audio: kind == .audio, realtime: config.realtime,
                                  frameRate: config.video.fps, reopening: reopening, report: report)
            },
            openTimeout: config.deviceTimeout,
            compositor: stages.video as? VideoCompositor, mixer: stages.audio, gains: gains, pictureSize: graphs.videoSizes.first,
            audioFormat: audioFormat, given: (opened.video.count, opened.audio.count), paced: paced, wallClock: wallClock,
            // The stream that sets the timeline's zero times the job.
            clockOrigin: { [timing = opened.video.first ?? opened.audio.first] in timing?.clockOrigin },
            spawn: { name, body in firstSession.spawn(name, onFailure: {}, body) }, statistics: statistics, report: report))
    }
}
