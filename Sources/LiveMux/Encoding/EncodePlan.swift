/// Which encodes a recording runs and what each feeds, decided from the outputs alone: outputs
/// that ask for the same video settings share one video encode, the same audio settings one
/// audio encode, and each pair in use is a mux session (a queue, a mux thread, its outputs). The
/// first URL output's encode may follow its link (`adapts`); the files, stdout and viewers that
/// ask for the same settings get an encode of their own at the bit rate asked for, unless
/// `VideoSettings.sharedEncode`, so a failing push never degrades the local recording. Live
/// viewers take the recording's settings. A plain value, so the routing is unit-tested without
/// an encoder, a thread or a file.
struct EncodePlan: Equatable {
    struct VideoEncode: Equatable {
        var settings: VideoSettings
        /// Its bit rate follows the first URL output's link.
        var adapts: Bool
    }

    struct Session: Equatable {
        /// Indices into `videoEncodes` and `audioEncodes`; nil when the kind is not recorded.
        var video: Int?
        var audio: Int?
        /// Indices into `Outputs.destinations`, in the order given.
        var destinations: [Int] = []
        /// Feeds the live viewers (`--listen`).
        var viewers = false
    }

    private(set) var videoEncodes: [VideoEncode] = []
    private(set) var audioEncodes: [AudioSettings] = []
    /// Those whose video does not adapt first, then by the first output each feeds: the first
    /// session measures the recording (`Statistics.measures`).
    private(set) var sessions: [Session] = []

    /// - Parameters:
    ///   - video, audio: the recording's settings; nil when the kind is not recorded.
    ///   - adaptive: whether the first URL output's video follows its link (`Pipeline.adaptiveBitrate`).
    init(video: VideoSettings?, audio: AudioSettings?, outputs: Outputs, adaptive: Bool) {
        let primary = outputs.destinations.firstIndex { $0.destination.isNetwork }
        let primaryVideo = primary.flatMap { p in video.map { outputs.destinations[p].encoding.applied(to: $0) } }
        let shared = video?.sharedEncode ?? false
        // Each output, then the viewers (at the recording's settings), in the order given.
        var wants: [(destination: Int?, encoding: OutputEncoding, isNetwork: Bool)] =
            outputs.destinations.enumerated().map { ($0, $1.encoding, $1.destination.isNetwork) }
        if outputs.listen != nil && outputs.servesViewers { wants.append((nil, OutputEncoding(), false)) }
        for want in wants {
            var v: Int?
            if let video {
                let settings = want.encoding.applied(to: video)
                let adapts = adaptive && settings == primaryVideo && (want.isNetwork || shared)
                v = Self.index(of: VideoEncode(settings: settings, adapts: adapts), in: &videoEncodes)
            }
            let a = audio.map { Self.index(of: want.encoding.applied(to: $0), in: &audioEncodes) }
            let s = sessions.firstIndex { $0.video == v && $0.audio == a } ?? {
                sessions.append(Session(video: v, audio: a))
                return sessions.count - 1
            }()
            if let d = want.destination { sessions[s].destinations.append(d) } else { sessions[s].viewers = true }
        }
        let encodes = videoEncodes
        let adapting = { (s: Session) in s.video.map { encodes[$0].adapts } ?? false }
        // A stable sort: within each group, the order outputs were given in.
        sessions = sessions.filter { !adapting($0) } + sessions.filter(adapting)
    }

    /// The video settings of the first URL output, whose link an adaptive bit rate follows.
    static func primaryVideo(_ video: VideoSettings, outputs: Outputs) -> VideoSettings? {
        outputs.destinations.first { $0.destination.isNetwork }.map { $0.encoding.applied(to: video) }
    }

    /// The configuration with what every output asks of its encode made the recording's own,
    /// when they all ask the same and no live viewer takes the recording's settings: one encode,
    /// at the size and rate the sources are then made at, as before outputs had settings.
    static func promotingCommonEncoding(_ c: RecordConfiguration) -> RecordConfiguration {
        guard let first = c.outputs.destinations.first?.encoding, !first.isEmpty,
              c.outputs.destinations.allSatisfy({ $0.encoding == first }),
              c.outputs.listen == nil || !c.outputs.servesViewers else { return c }
        var promoted = c
        promoted.video = first.applied(to: c.video)
        promoted.audio = first.applied(to: c.audio)
        for i in promoted.outputs.destinations.indices { promoted.outputs.destinations[i].encoding = OutputEncoding() }
        return promoted
    }

    private static func index<T: Equatable>(of item: T, in list: inout [T]) -> Int {
        if let i = list.firstIndex(of: item) { return i }
        list.append(item)
        return list.count - 1
    }
}
