import FFmpeg

/// Bytes that left a muxer, labelled with what they are, so a reader can start a new viewer at
/// "header + last keyframe" without parsing the container.
public struct Chunk: Sendable {
    public enum Kind: Sendable, Equatable {
        /// The container's header. Every output starts with it.
        case header
        /// What one media packet produced. `dts` is in milliseconds on the shared timeline.
        /// ASF emits bytes only in whole ASF packets, so these bytes may be empty or hold earlier packets too.
        case media(stream: StreamKind, dts: Int64, isKeyframe: Bool)
        /// The end of the stream (ASF index, FLV end-of-sequence).
        case trailer
    }

    /// Earlier bytes of the output to rewrite, at an offset from its start (the trailer of a
    /// recording updates the header with the duration and sizes). Only seekable sinks apply them.
    public struct Update: Sendable, Equatable {
        public let offset: Int64
        public let bytes: [UInt8]
    }

    /// Where the bytes are: the muxer's own dynamic buffer (no copy per packet), or an array.
    private enum Storage: Sendable {
        case array([UInt8])
        case muxed(MuxedBytes)
    }

    public let kind: Kind
    private let storage: Storage
    public let updates: [Update]
    /// Capture time (monotonic µs) of the media in this chunk; 0 for header and trailer.
    public let captureTime: Int64

    public init(kind: Kind, bytes: [UInt8], updates: [Update] = [], captureTime: Int64 = 0) {
        self.kind = kind
        storage = .array(bytes)
        self.updates = updates
        self.captureTime = captureTime
    }

    init(kind: Kind, muxed: MuxedBytes, captureTime: Int64 = 0) {
        self.kind = kind
        storage = .muxed(muxed)
        updates = []
        self.captureTime = captureTime
    }

    /// The bytes, as an array (a copy when they are still in the muxer's buffer: sinks use
    /// `withUnsafeBytes`).
    public var bytes: [UInt8] {
        switch storage {
        case .array(let a): return a
        case .muxed(let m): return m.array
        }
    }

    public var count: Int { withUnsafeBytes(\.count) }

    public var isEmpty: Bool { count == 0 }

    /// The muxer's buffer, when the bytes are still in it.
    var muxedBytes: MuxedBytes? {
        if case .muxed(let m) = storage { return m }
        return nil
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch storage {
        case .array(let a): return try a.withUnsafeBytes(body)
        case .muxed(let m): return try m.withUnsafeBytes(body)
        }
    }
}
