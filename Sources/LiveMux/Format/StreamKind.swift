/// Which stream of the recording a packet or chunk belongs to.
public enum StreamKind: String, Sendable, Hashable, CaseIterable, Comparable {
    case video, audio

    /// Video sorts first: it is stream 0 of every container LiveMux writes.
    public static func < (a: StreamKind, b: StreamKind) -> Bool { a == .video && b == .audio }
}
