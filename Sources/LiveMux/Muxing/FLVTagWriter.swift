import FFmpeg

/// FLV with HEVC video, which FFmpeg 5.1's FLV muxer refuses: the file header, onMetaData, the
/// sequence headers and one tag per packet, laid out as libavformat's flvenc lays them out for
/// H.264 (so readers see the same FLV), with HEVC signalled as `FLVHEVCMode` says. AAC audio is
/// written here too: one writer makes the whole file. Timestamps are milliseconds.
///
/// Used by the mux thread only.
final class FLVTagWriter: ContainerMuxer {
    private let mode: FLVHEVCMode
    private let seekable: Bool
    /// Stream index (the order given, video first) → kind and parameters.
    private let streams: [(kind: StreamKind, parameters: CodecParameters)]
    /// The hvcC record of the current sequence header.
    private var record: [UInt8]
    /// Bytes produced so far: the offset the next bytes land at.
    private var offset: Int64 = 0
    /// Where the duration and file size values sit in onMetaData (seekable outputs only).
    private var durationOffset: Int64 = 0, fileSizeOffset: Int64 = 0
    /// Largest pts + duration, and the last video DTS (for SequenceEnd), in milliseconds.
    private var duration: Int64 = 0
    private var lastVideoTimestamp: Int64 = 0

    private enum TagType: UInt8 { case audio = 8, video = 9, script = 18 }
    private static let fileHeaderSize: UInt64 = 9
    private static let hasAudioFlag: UInt8 = 4, hasVideoFlag: UInt8 = 1
    private static let tagHeaderSize = 11
    /// The tag's size field has 24 bits.
    private static let maxTagSize = 1 << 24
    /// Enhanced RTMP video packet types, and the AVCPacketType values codec 12 borrows.
    private enum VideoPacket: UInt8 { case sequenceStart = 0, codedFrames = 1, sequenceEnd = 2, codedFramesX = 3 }
    private static let isExHeader: UInt8 = 0x80
    private static let fourCC: [UInt8] = Array("hvc1".utf8)
    private static let codec12: UInt8 = 12
    private static let keyFrame: UInt8 = 1, interFrame: UInt8 = 2
    /// SoundFormat 10 (AAC), 44 kHz, 16-bit, stereo: the values the FLV specification fixes for AAC.
    private static let aacFlags: UInt8 = 0xAF
    private static let aacSequenceHeader: UInt8 = 0, aacRaw: UInt8 = 1
    /// onMetaData's `audiocodecid` (SoundFormat 10) and `audiosamplesize`, as flvenc writes them for AAC.
    private static let aacSoundFormat: Double = 10, aacSampleSize: Double = 16

    init(streams: [(kind: StreamKind, parameters: CodecParameters)], seekable: Bool, mode: FLVHEVCMode) throws {
        self.streams = streams
        self.seekable = seekable
        self.mode = mode
        let video = streams.first { $0.kind == .video }?.parameters
        do {
            record = try video.map { try HEVCConfigurationRecord.make(fromAnnexB: $0.extradata) } ?? []
        } catch {
            throw LiveMuxError.input("\(error)")
        }
    }

    var streamTimeBases: [Rational] { streams.map { _ in .milliseconds } }

    func writeHeader() throws -> MuxedBytes {
        let hasAudio = streams.contains { $0.kind == .audio }, hasVideo = streams.contains { $0.kind == .video }
        var out: [UInt8] = Array("FLV".utf8) + [1, (hasAudio ? Self.hasAudioFlag : 0) | (hasVideo ? Self.hasVideoFlag : 0)]
        out.appendBigEndian(Self.fileHeaderSize, bytes: 4)
        out.appendBigEndian(0, bytes: 4)  // PreviousTagSize0
        try appendTag(.script, timestamp: 0, body: metadata(startingAt: Int64(out.count + Self.tagHeaderSize)), to: &out)
        for s in streams {
            if s.kind == .video {
                try appendTag(.video, timestamp: 0, body: videoHeader(.sequenceStart, key: true) + record, to: &out)
            } else {
                try appendTag(.audio, timestamp: 0, body: [Self.aacFlags, Self.aacSequenceHeader] + s.parameters.extradata, to: &out)
            }
        }
        return try emit(out)
    }

    func write(_ packet: Packet, stream: Int, pts: Int64, dts: Int64, duration d: Int64) throws -> MuxedBytes {
        var out: [UInt8] = []
        out.reserveCapacity(packet.size + 64)
        if streams[stream].kind == .video {
            if let sets = packet.newExtradata {
                let changed: [UInt8]
                do { changed = try HEVCConfigurationRecord.make(fromAnnexB: sets) } catch { throw LiveMuxError.input("\(error)") }
                if changed != record {
                    record = changed
                    try appendTag(.video, timestamp: dts, body: videoHeader(.sequenceStart, key: true) + record, to: &out)
                }
            }
            let cts = pts - dts
            // CodedFramesX saves the three bytes of a zero composition time (enhanced only).
            let type: VideoPacket = cts == 0 && mode == .enhanced ? .codedFramesX : .codedFrames
            try appendTag(.video, timestamp: dts, to: &out) { body in
                body += videoHeader(type, key: packet.isKeyframe)
                if type == .codedFrames { body.appendBigEndian(UInt64(bitPattern: cts), bytes: 3) }
                packet.withBytes { bytes in
                    if AnnexB.hasStartCode(bytes) { AnnexB.appendLengthPrefixed(annexB: bytes, to: &body) } else { body += bytes }
                }
            }
            lastVideoTimestamp = max(lastVideoTimestamp, dts)
        } else {
            try appendTag(.audio, timestamp: dts, to: &out) { body in
                body += [Self.aacFlags, Self.aacRaw]
                packet.withBytes { body += $0 }
            }
        }
        duration = max(duration, pts + d)
        return try emit(out)
    }

    func writeTrailer() throws -> OutputContainer.Trailer {
        var out: [UInt8] = []
        if streams.contains(where: { $0.kind == .video }) {
            try appendTag(.video, timestamp: lastVideoTimestamp, body: videoHeader(.sequenceEnd, key: true), to: &out)
        }
        offset += Int64(out.count)
        guard seekable else { return OutputContainer.Trailer(appended: out, updates: []) }
        return OutputContainer.Trailer(appended: out, updates: [
            (durationOffset, Self.amfNumber(Double(duration) / 1000)),
            (fileSizeOffset, Self.amfNumber(Double(offset))),
        ])
    }

    /// The bytes of a video tag before its payload: frame type and packet type, then the FourCC
    /// (enhanced) or codec id 12 with the AVCPacketType and a composition time.
    private func videoHeader(_ type: VideoPacket, key: Bool) -> [UInt8] {
        let frame = key ? Self.keyFrame : Self.interFrame
        switch mode {
        case .enhanced:
            return [Self.isExHeader | frame << 4 | type.rawValue] + Self.fourCC
        case .codec12:
            // AVCPacketType 0 sequence header, 1 NAL units, 2 end; the composition time follows
            // (write adds it for NAL units, 0 for the others).
            return [frame << 4 | Self.codec12, type.rawValue] + (type == .codedFrames ? [] : [0, 0, 0])
        }
    }

    /// The onMetaData script tag's body, as flvenc writes it; `start` is the body's offset in the
    /// output, so the duration and file size can be found again by the trailer.
    private func metadata(startingAt start: Int64) -> [UInt8] {
        var body: [UInt8] = [Self.amfString]
        body.appendAMFName("onMetaData")
        var entries: [(String, [UInt8])] = []
        if seekable { entries.append(("duration", Self.amfNumber(0))) }
        for s in streams {
            let p = s.parameters
            if s.kind == .video {
                let codecID = mode == .enhanced ? Double(Self.fourCC.reduce(0) { $0 << 8 | UInt32($1) }) : Double(Self.codec12)
                entries += [("width", Self.amfNumber(Double(p.width))), ("height", Self.amfNumber(Double(p.height))),
                            ("videodatarate", Self.amfNumber(Double(p.bitRate) / 1024)), ("videocodecid", Self.amfNumber(codecID))]
            } else {
                entries += [("audiodatarate", Self.amfNumber(Double(p.bitRate) / 1024)),
                            ("audiosamplerate", Self.amfNumber(Double(p.sampleRate))), ("audiosamplesize", Self.amfNumber(Self.aacSampleSize)),
                            ("stereo", [Self.amfBool, p.channelCount == 2 ? 1 : 0]), ("audiocodecid", Self.amfNumber(Self.aacSoundFormat))]
            }
        }
        entries.append(("encoder", [Self.amfString] + Self.amfName("LiveMux")))
        if seekable { entries.append(("filesize", Self.amfNumber(0))) }
        body.append(Self.amfECMAArray)
        body.appendBigEndian(UInt64(entries.count), bytes: 4)
        for (name, value) in entries {
            body.appendAMFName(name)
            if name == "duration" { durationOffset = start + Int64(body.count) }
            if name == "filesize" { fileSizeOffset = start + Int64(body.count) }
            body += value
        }
        return body + [0, 0, Self.amfObjectEnd]
    }

    /// One tag: type, size, timestamp (24 bits and 7 more, as flvenc), stream id 0, body, and
    /// the PreviousTagSize after it.
    private func appendTag(_ type: TagType, timestamp: Int64, body: [UInt8], to out: inout [UInt8]) throws {
        try appendTag(type, timestamp: timestamp, to: &out) { $0 += body }
    }

    /// The same with the body written in place by `writeBody` (no copy of a packet's payload);
    /// the size is filled in after it.
    private func appendTag(_ type: TagType, timestamp: Int64, to out: inout [UInt8], writeBody: (inout [UInt8]) -> Void) throws {
        let start = out.count
        out.append(type.rawValue)
        out.appendBigEndian(0, bytes: 3)  // the size, below
        out.appendBigEndian(UInt64(timestamp & 0xFFFFFF), bytes: 3)
        out.append(UInt8((timestamp >> 24) & 0x7F))
        out.appendBigEndian(0, bytes: 3)
        writeBody(&out)
        let size = out.count - start - Self.tagHeaderSize
        guard size < Self.maxTagSize else {
            throw LiveMuxError.unsupported("an FLV tag holds less than 16 MiB; this \(type) packet needs \(size) bytes (lower the bit rate)")
        }
        for i in 0..<3 { out[start + 1 + i] = UInt8(truncatingIfNeeded: size >> (8 * (2 - i))) }
        out.appendBigEndian(UInt64(size + Self.tagHeaderSize), bytes: 4)
    }

    private func emit(_ bytes: [UInt8]) throws -> MuxedBytes {
        offset += Int64(bytes.count)
        return try MuxedBytes(copying: bytes)
    }

    // AMF0 type markers.
    private static let amfNumberMarker: UInt8 = 0, amfBool: UInt8 = 1, amfString: UInt8 = 2
    private static let amfECMAArray: UInt8 = 8, amfObjectEnd: UInt8 = 9

    private static func amfNumber(_ v: Double) -> [UInt8] {
        var out = [amfNumberMarker]
        out.appendBigEndian(v.bitPattern, bytes: 8)
        return out
    }

    private static func amfName(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        out.appendAMFName(s)
        return out
    }
}

private extension [UInt8] {
    mutating func appendBigEndian(_ v: UInt64, bytes: Int) {
        for i in stride(from: bytes - 1, through: 0, by: -1) { append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    /// An AMF0 string without its marker: 16-bit length, then UTF-8.
    mutating func appendAMFName(_ s: String) {
        let utf8 = Array(s.utf8)
        appendBigEndian(UInt64(utf8.count), bytes: 2)
        self += utf8
    }
}
