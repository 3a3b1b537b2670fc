/// Where one muxed stream goes.
public enum Destination: Sendable, Equatable {
    case file(String)
    case standardOutput
    /// A URL written through libavformat's protocols (`rtmp://`, `srt://`, `tcp://`, `udp://`).
    case network(String)

    public var description: String {
        switch self {
        case .file(let path): return path
        case .standardOutput: return "stdout"
        case .network(let url): return maskedURL(url)
        }
    }

    /// The file's path, nil for stdout and URLs.
    public var filePath: String? { if case .file(let path) = self { path } else { nil } }

    public var isNetwork: Bool { if case .network = self { return true } else { return false } }

        /// `scheme://…` names a network output; `-` stdout, and anything else a file. The scheme takes
    /// FFmpeg's characters (ASCII letters, digits, `+-.`), and `://` is found by Unicode scalar as
    /// `maskedURL` finds it: `tcp://\u{30D}u:KEY@h` is a URL whose description hides the key
    /// (a Character-based search missed it and printed the text as a file name; found by scripts/fuzz url).
    public static func parse(_ text: String) -> Destination {
        // As ffmpeg's protocols read them: `pipe:` and `pipe:1` are stdout, `file:NAME` the file NAME.
        if text == "-" || text == "pipe:" || text == "pipe:1" { return .standardOutput }
        if text.hasPrefix(fileProtocol) { return .file(String(text.dropFirst(fileProtocol.count))) }
        let scalars = Array(text.unicodeScalars)
        if let r = scalars.firstRange(of: Array("://".unicodeScalars)), r.lowerBound > 0,
           scalars[..<r.lowerBound].allSatisfy({ Self.schemeCharacters.contains($0) }) {
            return .network(text)
        }
        return .file(text)
    }

    /// FFmpeg's file protocol prefix (libavformat/file.c strips it).
    private static let fileProtocol = "file:"

    /// FFmpeg's URL_SCHEME_CHARS (libavformat/url.h).
    private static let schemeCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.".unicodeScalars)
}
