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
