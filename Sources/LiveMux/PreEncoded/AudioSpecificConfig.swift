/// MPEG-4 AudioSpecificConfig (ISO 14496-3 1.6.2.1) for AAC-LC, built by hand: libavcodec has no
/// public function that makes one from a sample rate and a channel count.
public enum AudioSpecificConfig {
    /// The sampling-frequency table; a rate's position is its index in the config and in ADTS.
    static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// The 2-byte config: 5 bits object type (2, AAC-LC), 4 bits sampling-frequency index, 4 bits
    /// channel configuration, then frameLengthFlag, dependsOnCoreCoder and extensionFlag (all 0).
    /// Nil when the rate is not in the table or the channel count has no configuration (1–6, 8).
    public static func make(sampleRate: Int, channels: Int, objectType: Int = 2) -> [UInt8]? {
        guard let index = sampleRates.firstIndex(of: sampleRate) else { return nil }
        let configuration: Int
        switch channels {
        case 1...6: configuration = channels
        case 8: configuration = 7
        default: return nil
        }
        return make(objectType: objectType, frequencyIndex: index, channelConfiguration: configuration)
    }

    static func make(objectType: Int, frequencyIndex: Int, channelConfiguration: Int) -> [UInt8] {
        let bits = (objectType & 0x1F) << 11 | (frequencyIndex & 0xF) << 7 | (channelConfiguration & 0xF) << 3
        return [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }
}
