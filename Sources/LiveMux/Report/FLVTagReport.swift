import Foundation
import FFmpeg

extension RecordingReport {
    /// Reads an FLV with `FLVTagReader` when its video is what FFmpeg 5.1's FLV reader cannot take
    /// apart: Enhanced RTMP (seen as `flashsv`, one packet) or codec id 12 (no codec; sequence
    /// header and end counted as packets). Nil for any other FLV, which libavformat reads.
    static func readFLVTags(_ path: String) throws -> RecordingReport? {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
            guard try needsTagReading(data) else { return nil }
            return try readTags(data, path: path)
        } catch let error as FLVTagReader.Unreadable {
            throw LiveMuxError.unsupported("cannot read '\(path)': \(error)")
        }
    }

    /// True when the first video tag is Enhanced RTMP or HEVC (codec id 12).
    private static func needsTagReading(_ data: Data) throws -> Bool {
        var reader = try FLVTagReader(data)
        while let tag = try reader.next() {
            if tag.kind == .video && tag.role != .other { return tag.isEnhanced || tag.codec == "hevc" }
        }
        return false
    }

    private static func readTags(_ data: Data, path: String) throws -> RecordingReport {
        var reader = try FLVTagReader(data)
        // Per stream, in the order of their first tags (as FFmpeg numbers FLV streams): the tag
        // that names its codec, its configuration and its first keyframe.
        var named: [FLVTagReader.Tag] = []
        var configurations: [Range<Int>?] = [], firstKeyframes: [Range<Int>?] = []
        var records: [PacketRecord] = []
        while let tag = try reader.next() {
            guard tag.kind != .script, tag.role != .other else { continue }
            guard let codec = tag.codec else {
                throw FLVTagReader.Unreadable(description: "its \(tag.kind) is \(tag.signalling ?? "unknown") (tag at byte \(tag.position)),"
                    + " which livemux report does not read beside HEVC or Enhanced RTMP video (it reads H.264, HEVC and AAC there)")
            }
            let i: Int
            if let known = named.firstIndex(where: { $0.kind == tag.kind }) {
                guard named[known].codec == codec else {
                    throw FLVTagReader.Unreadable(description: "its \(tag.kind) changes codec at byte \(tag.position)")
                }
                i = known
            } else {
                i = named.count
                named.append(tag)
                configurations.append(nil)
                firstKeyframes.append(nil)
            }
            if tag.role == .sequenceStart {
                configurations[i] = configurations[i] ?? tag.payload
                continue
            }
            if tag.isKeyframe && tag.kind == .video { firstKeyframes[i] = firstKeyframes[i] ?? tag.payload }
            records.append(PacketRecord(stream: i, timestamp: tag.timestamp, timeBase: .milliseconds, size: tag.payload.count,
                                        isKeyframe: tag.isKeyframe, position: Int64(tag.position)))
        }
        var streams = named.indices.map { i -> Stream in
            let tag = named[i], configuration = configurations[i].map { [UInt8](data[$0]) } ?? []
            if tag.kind == .video {
                let size = firstKeyframes[i].flatMap { pictureSize(codec: tag.codec, record: configuration, keyframe: [UInt8](data[$0])) }
                return Stream(index: i, kind: .video, codec: tag.codec ?? "", signalling: tag.signalling,
                              width: size?.width ?? 0, height: size?.height ?? 0, sampleRate: 0, channels: 0)
            }
            let audio = AudioSpecificConfig.read(configuration)
            return Stream(index: i, kind: .audio, codec: tag.codec ?? "", width: 0, height: 0,
                          sampleRate: audio?.sampleRate ?? 0, channels: audio?.channels ?? 0)
        }
        for r in records {
            streams[r.stream].packets += 1
            streams[r.stream].bytes += r.size
            if r.isKeyframe && streams[r.stream].kind == .video { streams[r.stream].keyframes.append(r.dts) }
        }
        var report = RecordingReport(path: path, formatName: "flv", fileSize: Int64(data.count), streams: streams, packets: records)
        if let cut = reader.truncatedAt {
            report.notes.append("cut off: the file ends inside the tag at byte \(cut); the whole tags before it are read")
        }
        return report
    }

    /// The picture size of H.264 or HEVC, found by libavcodec's parser in the first keyframe with
    /// the parameter sets of its record (avcC/hvcC) put in front by the mp4toannexb filter.
    private static func pictureSize(codec: String?, record: [UInt8], keyframe: [UInt8]) -> (width: Int, height: Int)? {
        guard codec == "hevc" || codec == "h264" else { return nil }
        let hevc = codec == "hevc"
        guard let parameters = try? CodecParameters.video(hevc: hevc, width: 0, height: 0, extradata: record),
              let filter = try? BitstreamFilter(name: hevc ? "hevc_mp4toannexb" : "h264_mp4toannexb", parameters: parameters),
              let annexB = try? filter.filter(Packet(copying: keyframe)).first?.bytes,
              let info = try? Parser(hevc: hevc).parse(annexB), info.width > 0 else { return nil }
        return (info.width, info.height)
    }
}
