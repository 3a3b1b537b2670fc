import FFmpeg

/// Facts about the FFmpeg libraries LiveMux runs on.
public enum Capabilities {
    /// Whether libavformat or libavdevice has an input format of this name (`lavfi`, `v4l2`, `mp4`…).
    /// (False for a device name when libavdevice cannot be loaded: opening a device says why.)
    /// (`lavfi` is read through libavfilter, so recognising it loads nothing.)
    static func isInputFormat(_ name: String) -> Bool {
        name == FilterGraph.formatName || ((try? FFmpegLibrary.hasInputFormat(named: name)) ?? false)
    }

    /// A `FORMAT:URL` source spec, with the format recognised by libavformat.
    public static func sourceSpec(_ text: String) -> SourceSpec {
        SourceSpec.parse(text, isKnownFormat: isInputFormat)
    }

    /// FFmpeg's release and each library's run-time version (`libavformat 59.27.100`).
    public static var ffmpegRelease: String { LibraryVersion.release }
    public static var libraryVersions: [String] { LibraryVersion.all.map(\.description) }

    /// The encoders LiveMux can use (`h264`, `libx264`) and whether this FFmpeg has them.
    public static var encoders: [(codec: String, encoder: String, found: Bool)] {
        let names = VideoCodec.allCases.map { ($0.rawValue, $0.encoderName) } + AudioCodec.allCases.map { ($0.rawValue, $0.encoderName) }
        return names.map { ($0, $1, FFmpegLibrary.hasEncoder(named: $1)) }
    }
}
