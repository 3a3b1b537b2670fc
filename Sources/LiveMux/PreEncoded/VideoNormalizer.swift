import FFmpeg

/// Turns H.264/HEVC input in any packaging into what the muxers take: Annex B access units, with
/// the parameter sets (Annex B, as `extract_extradata` writes them) as the stream's extradata —
/// or, for a muxer that stores length-prefixed NAL units itself (FLV), length-prefixed input with
/// its avcC record passed through untouched.
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
    private var parameterSets: [UInt8]?
    private(set) var width: Int
    private(set) var height: Int
    /// Bytes in each NAL length of length-prefixed packets (from the record; 4 without one).
    private var lengthSize = 4
    private var recordFilter: BitstreamFilter?
    private let extractor: BitstreamFilter
    private let parser: Parser
    private var sawKeyframe = false
    /// FLV stores H.264 as length-prefixed NAL units under an avcC record. When the muxer wants
    /// that and the input comes so (an MP4, VideoToolbox), packets pass through untouched: no
    /// conversion to Annex B that the FLV muxer would only undo, the costliest step of a remux.
    private let prefersLengthPrefixed: Bool
    /// The first avcC record, once packets may have gone out under it as the muxer's extradata.
    private var record: [UInt8]?
    /// Whether length-prefixed packets currently pass through. Anything else — an Annex B packet,
    /// new parameter sets — turns it off for the rest of the stream.
    private(set) var passesThrough = false
    /// Pass-through just ended: the next packet out carries the Annex B parameter sets as new
    /// extradata, which tells the FLV muxer its packets are Annex B from there on.
    private var announceAnnexB = false
    /// How the last packet was packaged: a packet that reads both ways is taken as packaged alike.
    private var lastPackaging: Packaging?

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

    private enum Packaging { case annexB, lengthPrefixed }

    init(codec: VideoCodec, width: Int?, height: Int?, extradata: [UInt8]?, prefersLengthPrefixed: Bool = false) throws {
        self.codec = codec
        self.width = width ?? 0
        self.height = height ?? 0
        self.prefersLengthPrefixed = prefersLengthPrefixed && codec == .h264
        let hevc = codec == .hevc
        let empty = try CodecParameters.video(hevc: hevc, width: 0, height: 0, extradata: [])
        extractor = try BitstreamFilter(name: "extract_extradata", parameters: empty)
        parser = try Parser(hevc: hevc)
        if let extradata, !extradata.isEmpty { try setParameterSets(extradata) }
    }

    /// The stream's extradata for the muxer: the avcC record while packets pass through under it,
    /// else the Annex B parameter sets; nil until some arrived.
    var extradata: [UInt8]? { record ?? parameterSets }

    var isReady: Bool { extradata != nil && width > 0 && height > 0 }

    /// The stream's parameters for a container writer, once `isReady`.
    func codecParameters() throws -> CodecParameters {
        try CodecParameters.video(hevc: codec == .hevc, width: width, height: height, extradata: extradata ?? [])
    }

    /// Takes parameter sets (an avcC/hvcC record, or Annex B NAL units).
    func setParameterSets(_ bytes: [UInt8]) throws {
        if AnnexB.hasStartCode(bytes) {
            endPassThrough()
            _ = try learn(annexB: bytes, isKeyframe: false)
            return
        }
        guard bytes.first == 1 else {
            throw LiveMuxError.input("video extradata is neither Annex B nor an \(codec == .hevc ? "hvcC" : "avcC") record (first byte \(bytes.first.map { String($0) } ?? "none"))")
        }
        guard AnnexB.isWellFormedRecord(bytes, hevc: codec == .hevc) else {
            throw LiveMuxError.input("the \(codec == .hevc ? "hvcC" : "avcC") record given as video extradata declares parameter sets it does not hold")
        }
        if let record {
            if record == bytes { return }  // the same record again
            endPassThrough()
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
        if prefersLengthPrefixed && record == nil {
            record = bytes
            passesThrough = true
        }
    }

    private func endPassThrough() {
        if passesThrough { announceAnnexB = true }
        passesThrough = false
    }

    /// Normalizes one access unit (taking the packet over). Throws `Problem` for a packet that
    /// must be dropped.
    func process(_ input: Packet, isKeyframe: Bool) throws -> Output {
        guard input.size > 0 else { throw Problem.unreadable("empty packet") }
        let packaging: Packaging? = input.withBytes { bytes in
            if AnnexB.isAnnexB(bytes, lengthSize: lengthSize) { return .annexB }
            guard AnnexB.isLengthPrefixed(bytes, lengthSize: lengthSize) else { return nil }
            // `00 00 01` and a NAL header byte 0 (HEVC's TRAIL_N) also read as a length of 256…511,
            // which tiles one packet in a few hundred: in an Annex B stream, it is Annex B.
            return AnnexB.hasStartCode(bytes) && lastPackaging == .annexB ? .annexB : .lengthPrefixed
        }
        guard let packaging else { throw Problem.unreadable("neither Annex B (no start code) nor length-prefixed NAL units") }
        lastPackaging = packaging
        input.resetForMuxing(isKeyframe: isKeyframe)
        var packet = input
        var changed: [UInt8]? = nil
        if passesThrough && packaging == .lengthPrefixed {
            // Only a keyframe can bring new parameter sets into effect; look only when it holds some.
            let hevc = codec == .hevc
            if isKeyframe && (width == 0 || input.withBytes { AnnexB.containsParameterSets(lengthPrefixed: $0, lengthSize: lengthSize, hevc: hevc) }) {
                let converted = try annexB(try input.reference(), packaging)
                changed = try learn(converted)
                if changed != nil {
                    endPassThrough()
                    packet = converted
                }
            }
        } else {
            endPassThrough()
            packet = try annexB(input, packaging)
            // Parameter sets take effect only at a keyframe (a new SPS activates at an IDR), so only
            // keyframes, and packets before any parameter sets, are searched for them.
            changed = isKeyframe || parameterSets == nil ? try learn(packet) : nil
        }
        guard parameterSets != nil else { throw Problem.beforeParameterSets }
        if !sawKeyframe {
            guard isKeyframe else { throw Problem.beforeKeyframe }
            sawKeyframe = true
        }
        if let sets = changed ?? (announceAnnexB ? parameterSets : nil) {
            try packet.setNewExtradata(sets)
            announceAnnexB = false
        }
        return Output(packet: packet, changedExtradata: changed)
    }

    /// The packet as Annex B (taking it over).
    private func annexB(_ packet: Packet, _ packaging: Packaging) throws -> Packet {
        if packaging == .annexB { return packet }
        let isKeyframe = packet.isKeyframe  // the filter takes the packet's contents over
        // With 4-byte lengths a picture that is not a keyframe converts in place: lengths become
        // start codes. The filter allocates a new packet and grows it per NAL unit (as much
        // work as reading the packet); it stays for keyframes, where it also inserts the
        // parameter sets the record holds.
        if !isKeyframe && lengthSize == 4 {
            try packet.withMutableBytes { AnnexB.replaceLengthsWithStartCodes($0) }
            return packet
        }
        if let filter = recordFilter {
            let out: [Packet]
            do { out = try filter.filter(packet) } catch { throw Problem.unreadable("length-prefixed packet does not parse (\(error))") }
            let converted = out.count == 1 ? out[0] : try Packet(copying: out.flatMap(\.bytes))
            converted.isKeyframe = isKeyframe
            return converted
        }
        guard let converted = packet.withBytes({ AnnexB.fromLengthPrefixed($0, lengthSize: lengthSize) }) else {
            throw Problem.unreadable("length-prefixed NAL units do not parse")
        }
        let out = try Packet(copying: converted)
        out.isKeyframe = isKeyframe
        return out
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
            if parameterSets == nil {
                parameterSets = sets
            } else if sets != parameterSets {
                parameterSets = sets
                changed = sets
            }
        }
        // The parser needs the parameter sets before the picture; it keeps them between calls.
        if (changed != nil || width == 0) && parameterSets != nil, let info = parser.parse(packet.bytes), info.width > 0 {
            width = info.width
            height = info.height
        }
        return changed
    }
}
