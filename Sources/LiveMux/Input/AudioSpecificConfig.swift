/// MPEG-4 AudioSpecificConfig (ISO 14496-3 1.6.2.1) for AAC-LC, built by hand: libavcodec has no
/// public function that makes one from a sample rate and a channel count.
public enum AudioSpecificConfig {
    /// The sampling-frequency table; a rate's position is its index in the config and in ADTS.
    public static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

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

/// The fixed and variable header of one ADTS frame (ISO 13818-7 6.2), read by hand to validate
/// lengths before libavcodec's `aac_adtstoasc` strips it.
struct ADTSHeader: Equatable {
    let objectType: Int
    let frequencyIndex: Int
    let channelConfiguration: Int
    /// The whole frame, header included.
    let frameLength: Int
    let headerLength: Int
    let rawDataBlocks: Int

    var sampleRate: Int? {
        frequencyIndex < AudioSpecificConfig.sampleRates.count ? AudioSpecificConfig.sampleRates[frequencyIndex] : nil
    }

    /// True when `bytes` begin with the ADTS syncword (12 bits set, layer 0).
    static func startsADTS<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8, C.Index == Int {
        bytes.count >= 2 && bytes[bytes.startIndex] == 0xFF && bytes[bytes.startIndex + 1] & 0xF6 == 0xF0
    }

    /// Parses the header at the start of `bytes`; nil when it is not a valid ADTS header.
    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 7, Self.startsADTS(bytes) else { return nil }
        let b = Array(bytes.prefix(7))
        let protectionAbsent = b[1] & 1 == 1
        objectType = Int(b[2] >> 6) + 1
        frequencyIndex = Int(b[2] >> 2) & 0xF
        channelConfiguration = Int(b[2] & 1) << 2 | Int(b[3] >> 6)
        frameLength = Int(b[3] & 0x03) << 11 | Int(b[4]) << 3 | Int(b[5] >> 5)
        rawDataBlocks = Int(b[6] & 0x03) + 1
        headerLength = protectionAbsent ? 7 : 9
        guard frequencyIndex < AudioSpecificConfig.sampleRates.count, frameLength > headerLength else { return nil }
    }
}
