import FFmpeg

/// The stream a browser plays through Media Source Extensions (`/live.mp4`): fragmented MP4 from
/// libavformat's `mp4` muxer, fed the same encoded packets as the FLV viewers (no second encode).
/// Its header chunk is the init segment (ftyp + moov); every packet becomes a fragment of its own
/// (moof + mdat) at once, so a viewer's GOP cache starts it at the latest keyframe and nothing
/// waits for the next packet. Timestamps stay on LiveMux's media clock, so a page can compare
/// `currentTime` with `media_time_s` in `/stats`. The HLS playlist (`HLSPlaylist`) is cut from
/// the same chunks.
enum BrowserStream {
    static let path = "/live.mp4"
    static let muxerName = "mp4"
    /// `frag_custom`: a fragment each time the writer flushes (after every packet);
    /// `empty_moov`: the init segment is the header; `default_base_moof`: what MSE expects;
    /// `frag_discont` with edit lists and timestamp shifting off: the first fragment's decode
    /// time is the packet's own, not 0.
    static let muxerOptions: [(String, String)] = [
        ("movflags", "frag_custom+empty_moov+default_base_moof+frag_discont"),
        ("use_editlist", "0"),
        ("avoid_negative_ts", "disabled"),
    ]

    /// Browsers decode H.264 and AAC from MP4 everywhere; anything else gets no browser stream.
    static func canCarry(_ stream: ContainerWriter.StreamDescription) -> Bool {
        stream.parameters.isH264 || stream.parameters.isAAC
    }

    /// `video/mp4; codecs="avc1.64001f,mp4a.40.2"`: what `MediaSource.isTypeSupported` and
    /// `addSourceBuffer` need, from the streams' own parameters.
    static func contentType(_ streams: [ContainerWriter.StreamDescription]) -> String {
        let codecs = streams.sorted { $0.kind < $1.kind }.compactMap { codec($0.parameters) }
        return codecs.isEmpty ? "video/mp4" : "video/mp4; codecs=\"\(codecs.joined(separator: ","))\""
    }

    /// RFC 6381's name of one stream's codec: `avc1.PPCCLL` from the SPS, `mp4a.40.AOT` from the
    /// AudioSpecificConfig.
    static func codec(_ p: CodecParameters) -> String? {
        let extra = p.extradata
        if p.isH264 {
            guard let sps = spsProfile(extra) else { return "avc1.42e01f" }  // Constrained Baseline 3.1: the default guess
            return "avc1." + sps.map { hex($0) }.joined()
        }
        if p.isAAC {
            // The audio object type is the first 5 bits of the AudioSpecificConfig (2: AAC LC).
            let objectType = extra.first.map { Int($0 >> 3) } ?? 2
            return "mp4a.40.\(objectType == 0 ? 2 : objectType)"
        }
        return nil
    }

    /// profile_idc, constraint flags and level_idc: bytes 1–3 of an avcC record, or the three
    /// bytes after the first SPS's NAL header in Annex B extradata.
    private static func spsProfile(_ extra: [UInt8]) -> [UInt8]? {
        if extra.count >= 4 && extra[0] == 1 { return Array(extra[1...3]) }
        var i = 0
        while i + 3 < extra.count {
            if extra[i] == 0, extra[i + 1] == 0, extra[i + 2] == 1 {
                let header = i + 3
                if header + 3 < extra.count, extra[header] & 0x1f == 7 { return Array(extra[(header + 1)...(header + 3)]) }
                i = header
            } else {
                i += 1
            }
        }
        return nil
    }

    private static func hex(_ b: UInt8) -> String {
        let s = String(b, radix: 16)
        return s.count == 1 ? "0" + s : s
    }
}
