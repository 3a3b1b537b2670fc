

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
