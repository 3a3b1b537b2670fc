import Foundation
import FFmpeg

/// Where a session's muxed streams go and how its network outputs and viewers behave: the same
/// for `record`, `serve` and `mux`.
public struct Outputs: Sendable {
    /// Files, stdout and URLs, each with its container.
    public var destinations: [OutputSpec] = []
    /// Where the HTTP server for live viewers listens (nil: no server).
    public var listen: ListenAddress?
    /// Whether that server streams to viewers (`/live.flv`, `/live.asf`); false: it shows the
    /// dashboard and the browsers' stream alone (`record --http`).
    public var servesViewers = true
    /// How network outputs retry after a failure.
    public var reconnect = ReconnectPolicy()
    /// Chunks each network output or HTTP viewer holds before dropping video (see OutputQueue).
    public var queueCapacity = 512
    /// HTTP viewers served at once (both streams together); past it a viewer gets 503.
    public var maxViewers = HTTPServer.defaultMaxViewers
    /// Who may watch the HTTP viewers' streams and index (nil: everyone who reaches the port).
    public var viewerAccess: ViewerAccess?
    /// Who may change the job through the control API at `/api` on the same server (nil: no API).
    public var controlAccess: ControlAccess?
    /// Each file gets a muxer of its own (not one per container), so one can end alone: a job
    /// whose outputs may be removed while it runs (`RecordConfiguration.liveControl`).
    var filesApart = false
    /// Replace output files that exist; when false, an existing regular file is an error.
    public var overwriteFiles = true
    /// How FLV outputs (files, stdout, URLs, /live.flv) signal HEVC; H.264 needs no choice.
    public var flvHEVC = FLVHEVCMode.enhanced
    /// Seconds a network output may fall behind real time before it skips to the newest keyframe.
    public var maxLatency: Double = 3
    /// What the kernel may hold for each TCP-based network output (`SO_SNDBUF`), in bytes; the
    /// pipeline sets it from the bit rates so a slow link shows at once instead of hiding in it.
    public var sendBufferBytes = 64 * 1024
    /// How TLS-based outputs (rtmps://) check the server's certificate: on, against the system's CAs.
    public var tls = TLSVerification()
    /// Cut every file output into segments (nil: one file each); stdout, URLs and viewers are
    /// never cut.
    public var segments: SegmentPlan?

    /// The files the job reads or writes besides its outputs (inputs, key files, `--stats`,
    /// `--segment-list`, a stderr that is a file): an output added while it runs may be none of
    /// them. The CLI fills it as it checks the command line.
    public var claimedFiles: [ClaimedFile] = []

    public init() {}

    /// These outputs, each with its id: those without one are numbered by their place (o0, o1 …).
    func identified() -> Outputs {
        var o = self
        for i in o.destinations.indices where o.destinations[i].id == nil { o.destinations[i].id = OutputID(i) }
        return o
    }

    /// Each output's statistics key (its id) and the label it is shown by, in the order given.
    var keyedLabels: [(key: String, label: String)] {
        identified().destinations.map { ($0.id!.description, $0.destination.description) }
    }

    /// The option that gives `listen`, for messages about the address: `--http` when only the
    /// dashboard is served.
    var addressOption: String { servesViewers ? "--listen" : "--http" }

    /// The warning for HEVC carried as Enhanced RTMP to rtmp(s):// outputs, else nil. FFmpeg 5.1's
    /// RTMP client announces no Enhanced RTMP capabilities in `connect`, so no server is known to
    /// take it, and one without it (nginx-rtmp 1.2) records and relays the audio only.
    public func enhancedRTMPWarning(video: VideoCodec?) -> String? {
        guard let video, flvHEVC == .enhanced else { return nil }
        let rtmp = destinations.compactMap { o -> String? in
            guard case .network(let url) = o.destination, url.lowercased().hasPrefix("rtmp"),
                  (o.encoding.videoCodec ?? video) == .hevc else { return nil }
            return o.destination.description
        }
        guard !rtmp.isEmpty else { return nil }
        return "\(rtmp.joined(separator: ", ")) gets HEVC as Enhanced RTMP: a server without Enhanced RTMP (nginx-rtmp) drops"
            + " the video and keeps only the audio; --flv-hevc codec12 is what such servers relay"
    }

    /// The warning for HEVC written as Enhanced FLV to files or stdout, else nil: FFmpeg before
    /// 6.1 (Debian 12's ffprobe and ffplay) reads its video as `flashsv` and cannot decode it.
    public func enhancedFLVWarning(video: VideoCodec?) -> String? {
        guard let video, flvHEVC == .enhanced else { return nil }
        let files = destinations.compactMap { o -> String? in
            guard !o.destination.isNetwork, o.format == .flv, (o.encoding.videoCodec ?? video) == .hevc else { return nil }
            return o.destination.description
        }
        guard !files.isEmpty else { return nil }
        return "\(files.joined(separator: ", ")) gets HEVC as Enhanced FLV (FourCC hvc1), which FFmpeg before 6.1 (Debian 12's ffprobe"
            + " and ffplay) reads as flashsv and cannot play; --flv-hevc codec12 writes what FFmpeg 5.1 plays"
    }

    /// Refuses what cannot work, with a message that says what would.
    func validate() throws {
        if !(maxLatency > 0) { throw LiveMuxError.invalid("--max-latency must be more than 0 seconds") }
        if destinations.isEmpty && (listen == nil || !servesViewers) { throw LiveMuxError.invalid("no output: give -o FILE or -o -") }
        if controlAccess != nil && listen == nil {
            throw LiveMuxError.invalid("the control API is served by the HTTP server: give --http HOST:PORT (record) or --listen (serve) with --control-key-file")
        }
        for o in destinations {
            guard case .network(let url) = o.destination else { continue }
            // libavformat's protocols print the URLs they open: keep the secrets out of its log.
            FFmpegLogRedaction.redact(secretParts(of: url))
            if let problem = rtmpURLProblem(url) ?? tls.problem(for: url) { throw LiveMuxError.invalid(problem) }
            guard NetworkOutput.canWrite(url: url) else {
                throw LiveMuxError.unsupported("cannot write to \(maskedURL(url)): this FFmpeg has no protocol for it (use rtmp://, srt://, tcp:// or udp://)")
            }
        }
        try validateSegments()
        var files = Set<String>()
        for o in destinations {
            guard case .file(let path) = o.destination else { continue }
            let key = URL(fileURLWithPath: path).standardizedFileURL.path
            if !files.insert(key).inserted { throw LiveMuxError.invalid("two outputs write to \(path): give each -o its own file") }
        }
    }

    /// Segments need a file to cut, a limit that makes sense, and names that differ per segment.
    private func validateSegments() throws {
        guard let policy = segments?.policy else { return }
        if let d = policy.duration, !(d > 0) { throw LiveMuxError.invalid("--segment-time must be more than 0 seconds") }
        if let size = policy.size, size <= 0 { throw LiveMuxError.invalid("--segment-size must be more than 0 bytes") }
        if policy.atClock && policy.duration == nil { throw LiveMuxError.invalid("--segment-at-clock needs --segment-time: the clock's period") }
        if let keep = policy.keep, keep < 1 { throw LiveMuxError.invalid("--segment-keep must be at least 1") }
        if policy.startNumber < 0 { throw LiveMuxError.invalid("--segment-start-number must be 0 or more") }
        let files = destinations.compactMap { o -> String? in if case .file(let p) = o.destination { p } else { nil } }
        if files.isEmpty {
            throw LiveMuxError.invalid("segments are cut only from file outputs (stdout, URLs and viewers get one stream): give -o NAME-%03d.asf")
        }
        for path in files where !SegmentName(path).hasFields {
            let url = URL(fileURLWithPath: path)
            let example = url.deletingPathExtension().lastPathComponent + "-%03d." + (url.pathExtension.isEmpty ? "asf" : url.pathExtension)
            throw LiveMuxError.invalid("-o \(path) names one file, but segments need a name each: number or date them, such as \(example) or rec-%Y%m%d-%H%M%S.\(url.pathExtension.isEmpty ? "asf" : url.pathExtension)")
        }
    }
}
