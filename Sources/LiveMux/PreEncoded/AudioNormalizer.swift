import FFmpeg

/// Turns AAC input into raw AAC frames with an AudioSpecificConfig as extradata: raw frames with
/// a given rate and channel count (config built by hand), or ADTS (headers checked by hand, then
/// stripped by libavcodec's `aac_adtstoasc`, which also derives the config).
///
/// Used under its owner's lock (one producer at a time).
final class AudioNormalizer {
    private(set) var sampleRate: Int
    private(set) var channels: Int
    /// The AudioSpecificConfig; nil until known (ADTS input before its first frame).
    private(set) var extradata: [UInt8]?
    private var adtsFilter: BitstreamFilter?
    /// Fixed by the first packet: a stream does not switch between ADTS and raw frames, so a
    /// packet of the other kind is damage (a lost ADTS header), not a new packaging.
    private var isADTS: Bool?

    enum Problem: Error {
        case unreadable(String)
        /// An ADTS header with another rate or channel configuration than the stream's.
        case parametersChanged
    }

    init(sampleRate: Int, channels: Int, extradata: [UInt8]?) throws {
        self.sampleRate = sampleRate
        self.channels = channels
        if let extradata, !extradata.isEmpty {
            self.extradata = extradata
        }
    }

    var isReady: Bool { extradata != nil }

    /// The stream's parameters for a container writer, once `isReady`.
    func codecParameters() throws -> CodecParameters {
        try CodecParameters.aac(sampleRate: sampleRate, channels: channels, extradata: extradata ?? [])
    }

    /// Normalizes one buffer (taking the packet over) and appends its frames to `frames`: an ADTS
    /// buffer may hold several; a raw buffer is one.
    func process(_ packet: Packet, into frames: inout [Packet]) throws {
        guard packet.size > 0 else { throw Problem.unreadable("empty packet") }
        let looksADTS = packet.withBytes { ADTSHeader.startsADTS($0) }
        if let isADTS, isADTS != looksADTS {
            throw Problem.unreadable(isADTS ? "no ADTS header in an ADTS stream" : "an ADTS header in a stream of raw frames")
        }
        if looksADTS {
            frames += try adts(packet.bytes)
            isADTS = true
            return
        }
        isADTS = false
        if extradata == nil {
            guard let config = AudioSpecificConfig.make(sampleRate: sampleRate, channels: channels) else {
                throw LiveMuxError.input("raw AAC at \(sampleRate) Hz with \(channels) channels has no AudioSpecificConfig:"
                                         + " give a rate of \(AudioSpecificConfig.sampleRates.map(String.init).joined(separator: ", ")) and 1-6 or 8 channels, or the config as extradata")
            }
            extradata = config
        }
        packet.resetForMuxing(isKeyframe: true)
        frames.append(packet)
    }

    private func adts(_ bytes: [UInt8]) throws -> [Packet] {
        var frames: [Packet] = []
        var at = 0
        while at < bytes.count {
            guard let header = ADTSHeader(bytes[at...]) else {
                throw Problem.unreadable("bytes \(at)… are not an ADTS header")
            }
            guard header.frameLength <= bytes.count - at else {
                throw Problem.unreadable("ADTS frame length \(header.frameLength) runs past the \(bytes.count - at) bytes given")
            }
            guard header.objectType == 2 || header.objectType == 1 || header.objectType == 5 else {
                throw Problem.unreadable("ADTS object type \(header.objectType) is not AAC")
            }
            if extradata != nil, isADTS == true,
               header.sampleRate != sampleRate || header.channelConfiguration != (channels == 8 ? 7 : channels) {
                throw Problem.parametersChanged
            }
            if adtsFilter == nil {
                let p = try CodecParameters.aac(sampleRate: header.sampleRate ?? sampleRate,
                                                channels: header.channelConfiguration, extradata: [])
                adtsFilter = try BitstreamFilter(name: "aac_adtstoasc", parameters: p)
            }
            let frame = try Packet(copying: Array(bytes[at..<(at + header.frameLength)]))
            at += header.frameLength
            let out: [Packet]
            do { out = try adtsFilter!.filter(frame) } catch { throw Problem.unreadable("ADTS frame rejected (\(error))") }
            for p in out {
                if extradata == nil, let config = p.newExtradata {
                    extradata = config
                    sampleRate = header.sampleRate ?? sampleRate
                    channels = header.channelConfiguration == 7 ? 8 : header.channelConfiguration
                }
                guard p.size > 0 else { continue }
                p.isKeyframe = true
                frames.append(p)
            }
        }
        return frames
    }
}
