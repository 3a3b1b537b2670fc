/// A running job as the control API shows it (`GET /api`, and the answer to each change): its
/// sources, outputs, layout and where its media time is. Encoded to the JSON of docs/control.md.
public struct JobDescription: Sendable, Equatable, Encodable {
    public struct Source: Sendable, Equatable, Encodable {
        public let id: SourceID
        public let name: String
        public let state: SourceState
        /// Audio only: the linear gain in the mix, the mute, and the level (nil: no sound yet).
        public var volume: Double?
        public var mute: Bool?
        public var peakDBFS: Double?

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(id.description, forKey: .id)
            try c.encode(id.kind.rawValue, forKey: .kind)
            try c.encode(name, forKey: .name)
            try c.encode(state.description, forKey: .state)
            guard id.kind == .audio, let volume, let mute else { return }
            try c.encode(volume, forKey: .volume)
            try c.encode(mute, forKey: .mute)
            try c.encode(peakDBFS, forKey: .peakDBFS)  // null when there is no level yet
        }
        private enum Key: String, CodingKey { case id, kind, name, state, volume, mute, peakDBFS = "peak_dbfs" }
    }

    public struct Output: Sendable, Equatable, Encodable {
        /// What an output is encoded at; a field is nil where the output has no such stream.
        public struct Settings: Sendable, Equatable, Encodable {
            public var vcodec: String?
            public var size: String?
            public var fps: String?
            public var vbitrate: Int?
            public var adapts: Bool?
            public var abitrate: Int?
        }
        public let id: OutputID
        /// Its file, stdout or URL, secrets masked: a label two outputs may share.
        public let target: String
        public let format: ContainerFormat
        public let state: OutputState
        public let bytes: Int64
        public let settings: Settings
        /// Whether its video bit rate can be set (`PATCH`): its encode is its own and dialled.
        public var vbitrateSettable = false

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(id.description, forKey: .id)
            try c.encode(target, forKey: .target)
            try c.encode(format.rawValue, forKey: .format)
            try c.encode(state.description, forKey: .state)
            try c.encode(bytes, forKey: .bytes)
            try c.encode(settings, forKey: .settings)
            try c.encode(vbitrateSettable, forKey: .vbitrateSettable)
        }
        private enum Key: String, CodingKey { case id, target, format, state, bytes, settings, vbitrateSettable = "vbitrate_settable" }
    }

    public struct Layout: Sendable, Equatable, Encodable {
        public let layout: VideoLayout
        public let main: SourceID

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(layout.rawValue, forKey: .layout)
            try c.encode(main.description, forKey: .main)
        }
        private enum Key: String, CodingKey { case layout, main }
    }

    public let sources: [Source]
    public let outputs: [Output]
    public let layout: Layout
    /// The media time muxed, and that of the newest frame the video encoder placed (a change
    /// made now shows from the frame after it), in seconds.
    public let mediaTime: Double
    public let placedTime: Double
    /// Whether file outputs are cut into segments.
    public let segments: Bool

    public func source(_ id: SourceID) -> Source? { sources.first { $0.id == id } }
    public func output(_ id: OutputID) -> Output? { outputs.first { $0.id == id } }

    private enum CodingKeys: String, CodingKey {
        case sources, outputs, layout, segments, mediaTime = "media_time_s", placedTime = "placed_time_s"
    }
}
