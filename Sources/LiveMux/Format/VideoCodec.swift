/// The video encoders LiveMux records with (libx264, libx265).
public enum VideoCodec: String, Sendable, CaseIterable {
    case h264, hevc

    var encoderName: String { self == .h264 ? "libx264" : "libx265" }
}
