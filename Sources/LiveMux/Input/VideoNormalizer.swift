import FFmpeg

/// Turns H.264/HEVC input in any packaging into what the muxers take: Annex B access units, with
/// the parameter sets (Annex B, as `extract_extradata` writes them) as the stream's extradata.
///
/// Accepts Annex B or length-prefixed (AVCC/HVCC) packets; parameter sets as an avcC/hvcC record
/// or Annex B, given up front, as a separate "extradata" packet, or only in-band. libavcodec does
/// the work: `h264_mp4toannexb`/`hevc_mp4toannexb` for records, `extract_extradata` for in-band
/// parameter sets, the H.264/HEVC parser for the frame size.
///
/// Used under its owner's lock (one producer at a time).
final class VideoNormalizer {
    let codec: VideoCodec
    /// The current parameter sets (Annex B); nil until some arrived.
    private(set) var extradata: [UInt8]?
    private(set) var width: Int
    private(set) var height: Int
    /// Bytes in each NAL length of length-prefixed packets (from the record; 4 without one).
    private var lengthSize = 4
    private var recordFilter: BitstreamFilter?
    private let extractor: BitstreamFilter
    private let parser: Parser
    private var sawKeyframe = false

    /// One packet ready for the muxer.
    struct Output {
        let packet: Packet
        /// Parameter sets that differ from the ones before (a resolution change); attached to the
        /// packet as new extradata, which makes the FLV muxer write a new sequence header.
        let changedExtradata: [UInt8]?
    }

    enum Problem: Error {
        case beforeParameterSets, beforeKeyframe, unreadable(String)
    }

    init(codec: VideoCodec, width: Int?, height: Int?, extradata: [UInt8]?) throws {
        self.codec = codec
        self.width = width ?? 0
        self.height = height ?? 0
        let hevc = codec == .hevc
        let empty = try CodecParameters.video(hevc: hevc, width: 0, height: 0, extradata: [])
        extractor = try BitstreamFilter(name: "extract_extradata", parameters: empty)
        parser = try Parser(hevc: hevc)
        if let extradata, !extradata.isEmpty { try setParameterSets(extradata) }
    }

    var isReady: Bool { extradata != nil && width > 0 && height > 0 }

    /// Takes parameter sets (an avcC/hvcC record, or Annex B NAL units).
    func setParameterSets(_ bytes: [UInt8]) throws {
        if AnnexB.hasStartCode(bytes) {
            _ = try learn(annexB: bytes, isKeyframe: false)
            return
        }
        guard bytes.first == 1 else {
            throw LiveMuxError.input("video extradata is neither Annex B nor an \(codec == .hevc ? "hvcC" : "avcC") record (first byte \(bytes.first.map { String($0) } ?? "none"))")
        }
        guard AnnexB.isWellFormedRecord(bytes, hevc: codec == .hevc) else {
            throw LiveMuxError.input("the \(codec == .hevc ? "hvcC" : "avcC") record given as video extradata declares parameter sets it does not hold")
        }
        // A record: the mp4toannexb filter converts it, and afterwards the packets that use it.
        let hevc = codec == .hevc
        let parameters = try CodecParameters.video(hevc: hevc, width: width, height: height, extradata: bytes)
        let filter: BitstreamFilter
        do {
            filter = try BitstreamFilter(name: hevc ? "hevc_mp4toannexb" : "h264_mp4toannexb", parameters: parameters)
        } catch {
            throw LiveMuxError.input("the \(hevc ? "hvcC" : "avcC") record given as video extradata is invalid (\(error))")
        }
        recordFilter = filter
        lengthSize = AnnexB.lengthSize(ofRecord: bytes, hevc: hevc)
        let annexB = try filter.outputParameters().extradata
        if !annexB.isEmpty { _ = try learn(annexB: annexB, isKeyframe: false) }
    }

    /// Normalizes one access unit. Throws `Problem` for a packet that must be dropped.
    func process(_ bytes: [UInt8], isKeyframe: Bool) throws -> Output {
        guard !bytes.isEmpty else { throw Problem.unreadable("empty packet") }
        // `00 00 01` also begins a 4-byte length of 256…511, so a packet whose lengths tile it
        // exactly is length-prefixed; only `00 00 00 01` is unambiguous (no 1-byte NAL unit exists).
        let startCode = AnnexB.hasStartCode(bytes)
            && (bytes[2] == 0 || !AnnexB.isLengthPrefixed(bytes, lengthSize: lengthSize))
        let packet: Packet
        if startCode {
            packet = try Packet(copying: bytes)
        } else if let filter = recordFilter {
            let input = try Packet(copying: bytes)
            input.isKeyframe = isKeyframe
            let out: [Packet]
            do { out = try filter.filter(input) } catch { throw Problem.unreadable("length-prefixed packet does not parse (\(error))") }
            packet = out.count == 1 ? out[0] : try Packet(copying: out.flatMap(\.bytes))
        } else if let converted = AnnexB.fromLengthPrefixed(bytes, lengthSize: lengthSize) {
            packet = try Packet(copying: converted)
        } else {
            throw Problem.unreadable("neither Annex B (no start code) nor length-prefixed NAL units")
        }
        packet.isKeyframe = isKeyframe
        // Parameter sets take effect only at a keyframe (a new SPS activates at an IDR), so only
        // keyframes, and packets before any parameter sets, are searched for them.
        let changed = isKeyframe || extradata == nil ? try learn(packet) : nil
        guard extradata != nil else { throw Problem.beforeParameterSets }
        if !sawKeyframe {
            guard isKeyframe else { throw Problem.beforeKeyframe }
            sawKeyframe = true
        }
        if let changed { try packet.setNewExtradata(changed) }
        return Output(packet: packet, changedExtradata: changed)
    }

    /// Reads parameter sets and the frame size out of Annex B bytes. Returns the new parameter
    /// sets when they replace different earlier ones.
    private func learn(annexB: [UInt8], isKeyframe: Bool) throws -> [UInt8]? {
        let packet = try Packet(copying: annexB)
        packet.isKeyframe = isKeyframe
        return try learn(packet)
    }

    /// The same for a packet (which stays as it is: the filter gets a new reference to it).
    private func learn(_ packet: Packet) throws -> [UInt8]? {
        let out: [Packet]
        do { out = try extractor.filter(try packet.reference()) } catch { throw Problem.unreadable("NAL units do not parse (\(error))") }
        var changed: [UInt8]? = nil
        if let sets = out.compactMap(\.newExtradata).last {
            if extradata == nil {
                extradata = sets
            } else if sets != extradata {
                extradata = sets
                changed = sets
            }
        }
        // The parser needs the parameter sets before the picture; it keeps them between calls.
        if (changed != nil || width == 0) && extradata != nil, let info = parser.parse(packet.bytes), info.width > 0 {
            width = info.width
            height = info.height
        }
        return changed
    }
}
