/// How FLV signals HEVC, which the original FLV specification does not know.
public enum FLVHEVCMode: String, Sendable, CaseIterable {
    /// Enhanced RTMP v1 (veovera): an extended video tag header with the FourCC `hvc1`; what OBS,
    /// YouTube Live, SRS 6, mediamtx and FFmpeg 6.1+ read.
    case enhanced
    /// The older convention of FLV codec id 12, laid out as AVC (id 7) is; what many CDNs and
    /// players in China expect.
    case codec12
}
