/// The containers LiveMux writes.
public enum ContainerFormat: String, Sendable, CaseIterable {
    case asf, flv

    /// The libavformat muxer.
    var muxerName: String { rawValue }

    /// The container a file name or URL implies: `.asf`/`.wmv` → ASF, `.flv` and `rtmp://` → FLV.
    public static func implied(by destination: String) -> ContainerFormat? {
        let lower = destination.lowercased()
        if lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://") { return .flv }
        if lower.hasSuffix(".asf") || lower.hasSuffix(".wmv") { return .asf }
        if lower.hasSuffix(".flv") { return .flv }
        return nil
    }
}

public enum VideoCodec: String, Sendable, CaseIterable {
    case h264, hevc

    var encoderName: String { self == .h264 ? "libx264" : "libx265" }
}

public enum AudioCodec: String, Sendable, CaseIterable {
    case aac

    var encoderName: String { "aac" }
}

/// Which stream of the recording a packet or chunk belongs to.
public enum StreamKind: String, Sendable, Hashable, CaseIterable, Comparable {
    case video, audio

    /// Video sorts first: it is stream 0 of every container LiveMux writes.
    public static func < (a: StreamKind, b: StreamKind) -> Bool { a == .video && b == .audio }
}

/// One value for each stream, looked up without hashing: the per-packet paths (interleaver,
/// container writer) use it where a dictionary would hash the kind's raw string every time.
struct PerStream<Value> {
    var video: Value
    var audio: Value

    init(repeating value: Value) {
        video = value
        audio = value
    }

    subscript(kind: StreamKind) -> Value {
        get { kind == .video ? video : audio }
        // In place: a get-then-set would copy a queued array on every append.
        _modify {
            if kind == .video { yield &video } else { yield &audio }
        }
    }
}

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

    /// Parses `FORMAT:URL`. The prefix counts as a format only when libavformat knows an input format
    /// by that name; otherwise the whole text is a path or URL (`rtmp://…`, `clip.mp4`).
    public static func parse(_ text: String, isKnownFormat: (String) -> Bool) -> SourceSpec {
        if let colon = text.firstIndex(of: ":") {
            let prefix = String(text[..<colon])
            if !prefix.isEmpty, !prefix.contains("/"), isKnownFormat(prefix) {
                return SourceSpec(format: prefix, url: String(text[text.index(after: colon)...]))
            }
        }
        return SourceSpec(format: nil, url: text)
    }

    public var description: String { format.map { "\($0):\(url)" } ?? url }
}

public struct VideoSettings: Sendable, Equatable {
    public var codec: VideoCodec = .h264
    /// The frame size (both, or neither): nil keeps the source's own; the built-in test source
    /// makes `builtInWidth`x`builtInHeight`. Another size is scaled to.
    public var width: Int?
    public var height: Int?
    /// Nil keeps the source's own rate (the built-in test source's: `builtInFrameRate`). At
    /// another rate each frame takes its slot on the timeline's frame grid: a faster source's
    /// extra frames are dropped, a slower one leaves slots empty.
    public var fps: FrameRate?
    public var bitRate = 2_000_000
    public var gopSeconds: Double = 2
    public var preset = "veryfast"
    /// Encoder tuning; `zerolatency` also turns off B-frames and look-ahead.
    public var tune = "zerolatency"

    public init() {}

    public static let builtInWidth = 1280
    public static let builtInHeight = 720
    public static let builtInFrameRate = FrameRate(30)!
}

public struct AudioSettings: Sendable, Equatable {
    public var codec: AudioCodec = .aac
    /// Nil keeps the source's own (the built-in tone's: `builtInSampleRate`), or the nearest
    /// rate AAC takes; another rate is resampled to.
    public var sampleRate: Int?
    /// Nil keeps the source's own: mono or stereo, more is mixed down to stereo (the built-in
    /// tone is stereo).
    public var channels: Int?
    public var bitRate = 128_000

    public init() {}

    public static let builtInSampleRate = 48_000
    public static let builtInChannels = 2

    /// The rates AAC's sampling-frequency table has (8 to 96 kHz).
    public static let aacSampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000]
}

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

    /// `scheme://…` names a network output; anything else (but `-`) is a file. The scheme takes
    /// FFmpeg's characters (ASCII letters, digits, `+-.`), and `://` is found by Unicode scalar as
    /// `maskedURL` finds it: `tcp://\u{30D}u:KEY@h` is a URL whose description hides the key
    /// (a Character-based search missed it and printed the text as a file name; found by scripts/fuzz url).
    public static func parse(_ text: String) -> Destination {
        if text == "-" { return .standardOutput }
        let scalars = Array(text.unicodeScalars)
        if let r = scalars.firstRange(of: Array("://".unicodeScalars)), r.lowerBound > 0,
           scalars[..<r.lowerBound].allSatisfy({ Self.schemeCharacters.contains($0) }) {
            return .network(text)
        }
        return .file(text)
    }

    /// FFmpeg's URL_SCHEME_CHARS (libavformat/url.h).
    private static let schemeCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.".unicodeScalars)
}

public struct OutputSpec: Sendable, Equatable {
    public var destination: Destination
    public var format: ContainerFormat

    public init(destination: Destination, format: ContainerFormat) {
        self.destination = destination
        self.format = format
    }
}

/// Everything `livemux record` needs.
public struct RecordConfiguration: Sendable {
    /// One input carrying both streams (`--input`); when set, `videoSource`/`audioSource` are unused.
    public var input: SourceSpec?
    public var videoSource: SourceSpec?
    public var audioSource: SourceSpec?
    public var video = VideoSettings()
    public var audio = AudioSettings()
    public var recordVideo = true
    public var recordAudio = true
    /// Where the recording goes: files, stdout, URLs, HTTP viewers.
    public var outputs = Outputs()
    /// Stop after this much media (seconds); nil runs until stopped.
    public var duration: Double?
    /// Pace synthetic and file sources at real time (devices always run at their own pace).
    public var realtime = true
    /// Packets each stream's mux queue holds before its producer waits.
    public var queueCapacity = 256
    public init() {}

    /// The default sources: a test pattern and a 440 Hz tone made in the format the settings ask
    /// for (by default 1280x720 at 30 fps, 48 kHz stereo), so nothing needs converting.
    public static func defaultVideoSource(_ v: VideoSettings) -> SourceSpec {
        let (width, height) = v.width.flatMap { w in v.height.map { (w, $0) } } ?? (VideoSettings.builtInWidth, VideoSettings.builtInHeight)
        return SourceSpec(format: "lavfi", url: "testsrc2=size=\(width)x\(height):rate=\(v.fps ?? VideoSettings.builtInFrameRate)")
    }

    public static func defaultAudioSource(_ a: AudioSettings) -> SourceSpec {
        let layout = (a.channels ?? AudioSettings.builtInChannels) == 1 ? "mono" : "stereo"
        return SourceSpec(format: "lavfi", url: "sine=frequency=440:sample_rate=\(a.sampleRate ?? AudioSettings.builtInSampleRate),"
                          + "aformat=sample_fmts=fltp:channel_layouts=\(layout)")
    }
}
