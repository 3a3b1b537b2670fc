import POSIX

/// An input: `FORMAT:URL` for a libavdevice or libavformat input (`lavfi:testsrc2`, `v4l2:/dev/video0`,
/// `x11grab::99.0`, `pulse:default`), or a bare file path or URL.
public struct SourceSpec: Sendable, Equatable {
    public var format: String?
    public var url: String
    /// Options for the device or demuxer (`video_size`, `framerate`, `sample_rate`, …).
    public var options: [String: String]

    public init(format: String?, url: String, options: [String: String] = [:]) {
        self.format = format
        self.url = url
        self.options = options
    }

    /// Standard input as libavformat names it: `-` means this, as `ffmpeg -i -` does.
    public static let standardInput = "pipe:0"

    /// Whether `url` reads standard input (`-`, `pipe:`, `pipe:0`).
    public static func isStandardInput(_ url: String) -> Bool { url == "-" || url == "pipe:" || url == standardInput }

    /// Parses `FORMAT:URL`. The prefix counts as a format only when libavformat knows an input format
    /// by that name; otherwise the whole text is a path or URL (`rtmp://…`, `clip.mp4`); `-` is stdin.
    public static func parse(_ text: String, isKnownFormat: (String) -> Bool) -> SourceSpec {
        if text == "-" { return SourceSpec(format: nil, url: standardInput) }
        if let colon = text.firstIndex(of: ":") {
            let prefix = String(text[..<colon])
            if !prefix.isEmpty, !prefix.contains("/"), isKnownFormat(prefix) {
                return SourceSpec(format: prefix, url: String(text[text.index(after: colon)...]))
            }
        }
        return SourceSpec(format: nil, url: text)
    }

    public var description: String { format.map { "\($0):\(url)" } ?? url }

    /// Whether a read of it may wait for ever: anything but a regular file (stdin, a pipe or FIFO,
    /// a socket, a network URL), whose writer can stall without closing.
    var readsMayBlock: Bool {
        if Self.isStandardInput(url) || url.contains("://") || url.hasPrefix("pipe:") { return true }
        return (try? FileKind(path: url)) != .regular
    }

    /// The description with credentials in the URL masked: how messages and stats name it.
    var maskedDescription: String {
        var masked = self
        masked.url = maskedURL(url)
        return masked.description
    }
}
