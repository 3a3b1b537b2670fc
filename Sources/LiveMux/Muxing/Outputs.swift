import Foundation
import FFmpeg

/// Where a session's muxed streams go and how its network outputs and viewers behave: the same
/// for `record`, `serve` and `mux`.
public struct Outputs: Sendable {
    /// Files, stdout and URLs, each with its container.
    public var destinations: [OutputSpec] = []
    /// Where the HTTP server for live viewers listens (nil: no server).
    public var listen: ListenAddress?
    /// How network outputs retry after a failure.
    public var reconnect = ReconnectPolicy()
    /// Chunks each network output or HTTP viewer holds before dropping video (see OutputQueue).
    public var queueCapacity = 512
    /// HTTP viewers served at once (both streams together); past it a viewer gets 503.
    public var maxViewers = HTTPServer.defaultMaxViewers
    /// Replace output files that exist; when false, an existing regular file is an error.
    public var overwriteFiles = true
    /// How FLV outputs (files, stdout, URLs, /live.flv) signal HEVC; H.264 needs no choice.
    public var flvHEVC = FLVHEVCMode.enhanced

    public init() {}

    /// Refuses what cannot work, with a message that says what would.
    func validate() throws {
        if destinations.isEmpty && listen == nil { throw LiveMuxError.invalid("no output: give -o FILE or -o -") }
        for o in destinations {
            guard case .network(let url) = o.destination else { continue }
            // libavformat's protocols print the URLs they open: keep the secrets out of its log.
            FFmpegLogRedaction.redact(secretParts(of: url))
            guard NetworkOutput.canWrite(url: url) else {
                throw LiveMuxError.unsupported("cannot write to \(maskedURL(url)): this FFmpeg has no protocol for it (use rtmp://, srt://, tcp:// or udp://)")
            }
        }
        var files = Set<String>()
        for o in destinations {
            guard case .file(let path) = o.destination else { continue }
            let key = URL(fileURLWithPath: path).standardizedFileURL.path
            if !files.insert(key).inserted { throw LiveMuxError.invalid("two outputs write to \(path): give each -o its own file") }
        }
    }
}
