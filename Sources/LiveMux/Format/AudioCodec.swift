/// The audio encoders LiveMux records with.
public enum AudioCodec: String, Sendable, CaseIterable {
    case aac

    var encoderName: String { "aac" }
}
