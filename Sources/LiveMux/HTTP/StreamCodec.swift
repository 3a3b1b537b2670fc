/// One elementary stream of a served stream, as the server's index lists it.
struct StreamCodec: Sendable, Equatable, Encodable {
    var type: String
    var codec: String
    var width: Int?
    var height: Int?
    var sampleRate: Int?
    var channels: Int?

    enum CodingKeys: String, CodingKey {
        case type, codec, width, height, channels
        case sampleRate = "sample_rate"
    }

    /// `h264 640x360`, `aac 48000 Hz 2 ch`.
    var summary: String {
        if let width, let height { return "\(codec) \(width)x\(height)" }
        if let sampleRate, let channels { return "\(codec) \(sampleRate) Hz \(channels) ch" }
        return codec
    }
}

extension StreamCodec {
    init(_ stream: ContainerWriter.StreamDescription) {
        let p = stream.parameters
        type = stream.kind.rawValue
        codec = p.codecName
        if stream.kind == .video {
            (width, height) = (p.width, p.height)
        } else {
            (sampleRate, channels) = (p.sampleRate, p.channelCount)
        }
    }
}
