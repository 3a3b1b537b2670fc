import Foundation
import FFmpeg

/// What `livemux report` tells about a recording, read back packet by packet (no decoding):
/// streams, duration, GOP structure, bit rate over time, and how well audio and video are
/// interleaved in file order. A player reads a file front to back; if audio for a moment sits far
/// from the video of that moment in the file, it must buffer that far or stall.
public struct RecordingReport: Sendable {
    struct Stream: Sendable {
        let index: Int
        let kind: StreamKind?
        let codec: String
        /// How the container names the codec ("FourCC HEVC", "FLV codec id 12"), shown when
        /// libavformat does not name it or LiveMux reads the container itself.
        var signalling: String? = nil
        let width: Int, height: Int
        let sampleRate: Int, channels: Int
        var packets = 0
        var bytes = 0
        var keyframes: [Double] = []
    }

    /// One packet, in file order (by the position where it starts).
    struct PacketRecord: Sendable {
        let stream: Int
        /// The DTS in `timeBase`: times of two streams are compared exactly, in integers.
        let timestamp: Int64
        let timeBase: Rational
        let size: Int
        let isKeyframe: Bool
        let position: Int64
        /// False for a packet that came with no DTS and is placed by its PTS (the first packets
        /// of a stream with B-frames, before the demuxer knows the delay): its time is not when
        /// it is decoded, so it stays out of the interleaving and the frame rate.
        var timestampIsDTS = true

        /// The DTS in seconds, for what is shown and measured (distances, bit rate).
        var dts: Double { Double(timestamp) * timeBase.doubleValue }
    }

    /// A packet whose DTS lies before the DTS already read from another stream.
    struct Inversion: Sendable {
        let packet: Int  // index in file order
        let position: Int64
        let dts: Double
        let otherDTS: Double
    }

    let path: String
    let formatName: String
    let fileSize: Int64
    private(set) var streams: [Stream]
    let packets: [PacketRecord]
    /// What the numbers rest on, or leave out, beyond the file as it is: one line each.
    var notes: [String] = []
    /// What an ASF or FLV header says about the recording's end (nil for other containers).
    var finalisation: Finalisation?

    /// Largest distance between a packet's DTS and the last DTS read from the other stream (s).
    private(set) var largestDistance: Double = 0
    private(set) var largestDistancePacket = 0
    private(set) var inversions: [Inversion] = []
    /// Packets whose DTS does not increase within their own stream.
    private(set) var backwardsInStream = 0
    /// File order against media time: (packet index, last video DTS − last audio DTS in seconds).
    private(set) var offsetTrace: [(packet: Int, offset: Double)] = []

    /// Past this distance, or with any inversion, the interleaving is called bad.
    static let distanceLimit = 1.0

    var isWellInterleaved: Bool { inversions.isEmpty && largestDistance <= Self.distanceLimit && backwardsInStream == 0 }

    var start: Double { packets.map(\.dts).min() ?? 0 }
    var end: Double { packets.map(\.dts).max() ?? 0 }
    var duration: Double { max(0, end - start) }

    /// Reads every packet of the file, no decoding: through libavformat, or FLV with HEVC or
    /// Enhanced RTMP video, which FFmpeg 5.1 cannot read, through `FLVTagReader`.
    public static func read(_ path: String) throws -> RecordingReport {
        let input: InputDevice
        do {
            input = try InputDevice(format: nil, url: path, options: [])
        } catch let error as FFmpegError {
            throw ExplainedError("cannot read '\(path)': \(error.message) (give a recording, such as one livemux record wrote)", cause: error)
        }
        // libavformat opens pictures and text too (an SVG as image2, a .txt as tty): one frame, or
        // none, is no recording to report on.
        let media = input.streams.contains { $0.mediaType == .video || $0.mediaType == .audio }
        if Self.isNotAContainer(input.formatName) || !media {
            throw LiveMuxError.input("'\(path)' is \(!media ? "no audio or video" : input.formatName == "tty" ? "text (tty)" : "an image (\(input.formatName))")"
                                     + ", not a recording: livemux report reads media containers (ASF, FLV, MP4, MKV, TS…)")
        }
        var report = try (input.formatName == "flv" ? readFLVTags(path) : nil) ?? readPackets(of: input, path: path)
        report.analyseInterleaving()
        report.finalisation = Finalisation.read(path)
        return report
    }

    /// Every packet libavformat reads, in file order.
    private static func readPackets(of input: InputDevice, path: String) throws -> RecordingReport {
        var streams = input.streams.map { s in
            let p = s.parameters
            let fourCC = p.isUnknownCodec && p.codecTag != 0 ? Self.fourCC(p.codecTag) : nil
            return Stream(index: s.index, kind: s.mediaType == .video ? .video : s.mediaType == .audio ? .audio : nil,
                          codec: fourCC.flatMap { Self.codecsByFourCC[$0] } ?? p.codecName, signalling: fourCC.map { "FourCC \($0)" },
                          width: p.width, height: p.height, sampleRate: p.sampleRate, channels: p.channelCount)
        }
        var bases = input.streams.map(\.timeBase)
        var notes: [String] = []
        // Elementary H.264/HEVC has no timestamps: its frames are counted at a rate, as `livemux
        // mux` times them (ElementaryFrameRate, else 25 fps).
        let elementary = Self.elementaryFormats.contains(input.formatName)
        if elementary {
            let stated = ElementaryFrameRate.read(path, hevc: input.formatName == "hevc").flatMap(FrameRate.init)
            let rate = stated.flatMap { $0.isSupported ? $0 : nil } ?? FileMuxJob.fallbackFrameRate
            bases = bases.map { _ in rate.frameDuration }
            notes.append("timing: an elementary stream has no timestamps: its frames are timed in decoding order at \(rate) fps, "
                         + (stated == rate ? "the rate its parameter sets state" : "as its parameter sets state no usable rate"))
        }
        var untimed = [Int](repeating: 0, count: streams.count)
        var placedByPTS = [Int](repeating: 0, count: streams.count)
        var records: [PacketRecord] = []
        let packet = try Packet()
        while try input.read(into: packet) {
            let i = packet.streamIndex
            guard i < streams.count else { continue }
            var ts = packet.dts
            let hasDTS = ts != Timestamp.none || elementary
            if ts == Timestamp.none { ts = packet.pts }
            if elementary { ts = Int64(streams[i].packets) }
            guard ts != Timestamp.none else {
                untimed[i] += 1
                continue
            }
            if !hasDTS { placedByPTS[i] += 1 }
            let record = PacketRecord(stream: i, timestamp: ts, timeBase: bases[i], size: packet.size,
                                      isKeyframe: packet.isKeyframe, position: packet.position, timestampIsDTS: hasDTS)
            records.append(record)
            streams[i].packets += 1
            streams[i].bytes += packet.size
            if packet.isKeyframe && streams[i].kind == .video { streams[i].keyframes.append(record.dts) }
        }
        // File order is where each packet starts in the file. Demuxers may hand packets over in
        // another order: FFmpeg's ASF reader returns a frame split over several ASF packets only
        // after audio that follows it. Packets starting in one container packet (one ASF packet)
        // are ordered by DTS: a reader takes that packet whole.
        if records.allSatisfy({ $0.position >= 0 }) {
            records = records.enumerated().sorted { a, b in
                let (p, q) = (a.element, b.element)
                if p.position != q.position { return p.position < q.position }
                let order = Timestamp.compare(p.timestamp, p.timeBase, q.timestamp, q.timeBase)
                return order != 0 ? order < 0 : a.offset < b.offset
            }.map(\.element)
        }
        for (i, count) in untimed.enumerated() where count > 0 {
            notes.append("timing: \(count) packets of stream \(i) carry no timestamp and are left out of every number")
        }
        for (i, count) in placedByPTS.enumerated() where count > 0 && count < streams[i].packets {
            notes.append("timing: the first \(count) packets of stream \(i) carry no DTS (the decoder's delay is not known yet):"
                         + " placed by their PTS, and left out of the interleaving and the frame rate")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        var report = RecordingReport(path: path, formatName: input.formatName, fileSize: size, streams: streams, packets: records)
        report.notes = notes
        return report
    }

    /// libavformat's readers of pictures (`image2`, and `svg_pipe`, `png_pipe`… when probed by
    /// content) and of text shown as video (`tty`).
    static func isNotAContainer(_ formatName: String) -> Bool {
        formatName == "image2" || formatName == "tty" || formatName.hasSuffix("_pipe")
    }

    /// libavformat's elementary video formats (H.264 and HEVC Annex B streams).
    static let elementaryFormats: Set<String> = ["h264", "hevc"]

    /// FourCCs of codecs FFmpeg 5.1's ASF reader does not name: its RIFF table has none for HEVC
    /// ('HEVC' and 'H265' are in the unofficial one, which only the AVI reader consults), so
    /// LiveMux's HEVC in ASF (tag 'HEVC') reads back with no codec.
    static let codecsByFourCC = ["HEVC": "hevc", "H265": "hevc", "hvc1": "hevc", "hev1": "hevc"]

    /// A codec tag as text, first character from the low byte; nil unless all four are printable.
    static func fourCC(_ tag: UInt32) -> String? {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    init(path: String, formatName: String, fileSize: Int64, streams: [Stream], packets: [PacketRecord]) {
        self.path = path
        self.formatName = formatName
        self.fileSize = fileSize
        self.streams = streams
        self.packets = packets
    }

    /// Walks the packets in file order, as a player would.
    mutating func analyseInterleaving() {
        var last: [Int: PacketRecord] = [:]
        let video = streams.first { $0.kind == .video }?.index
        let audio = streams.first { $0.kind == .audio }?.index
        let judged = judgedPackets
        for (n, p) in packets.enumerated() where judged[p.stream] != .byDTS || p.timestampIsDTS {
            if let mine = last[p.stream], Self.isBefore(p, mine) { backwardsInStream += 1 }
            for (other, q) in last where other != p.stream {
                let distance = abs(p.dts - q.dts)
                if distance > largestDistance {
                    largestDistance = distance
                    largestDistancePacket = n
                }
                if Self.isBefore(p, q) {
                    inversions.append(Inversion(packet: n, position: p.position, dts: p.dts, otherDTS: q.dts))
                }
            }
            last[p.stream] = p
            if let v = video, let a = audio, let lv = last[v], let la = last[a] {
                offsetTrace.append((n, lv.dts - la.dts))
            }
        }
    }

    /// How each stream's packets are judged: by their DTS where the stream has any (a packet
    /// placed by its PTS then is left out), else by what they carry.
    enum Timing { case byDTS, asCarried }

    /// Each stream's `Timing`, by stream index.
    var judgedPackets: [Int: Timing] {
        var timing: [Int: Timing] = [:]
        for p in packets where timing[p.stream] != .byDTS { timing[p.stream] = p.timestampIsDTS ? .byDTS : .asCarried }
        return timing
    }

    /// True when `a`'s DTS lies strictly before `b`'s, compared exactly across time bases: as
    /// doubles, 76800/48000 s came out below 24576/15360 s, though both are 1.6 s.
    static func isBefore(_ a: PacketRecord, _ b: PacketRecord) -> Bool {
        Timestamp.compare(a.timestamp, a.timeBase, b.timestamp, b.timeBase) < 0
    }

    /// Bit rate (kbit/s) of every stream together, per `interval` seconds of DTS from the start.
    func bitrate(interval: Double = 1) -> [Double] {
        guard !packets.isEmpty, interval > 0 else { return [] }
        var buckets = [Double](repeating: 0, count: Int(duration / interval) + 1)
        for p in packets { buckets[min(buckets.count - 1, Int((p.dts - start) / interval))] += Double(p.size) }
        // The last bucket covers only what is left of the duration (at least one packet's worth).
        let lastWidth = max(duration - Double(buckets.count - 1) * interval, interval / 4)
        return buckets.enumerated().map { i, bytes in
            bytes * 8 / (i == buckets.count - 1 ? min(lastWidth, interval) : interval) / 1000
        }
    }

    /// How long a stream lasts: N packets at a regular interval last N intervals, the last one
    /// too (last − first DTS is one interval short: 29.83 frames/s for 3 s at 30). 0 below 2 packets.
    func duration(of stream: Stream) -> Double {
        guard let interval = packetInterval(of: stream) else { return 0 }
        return interval * Double(stream.packets)
    }

    /// The stream's own mean distance between packets: the span of its DTS over the packets that
    /// carry one, so packets placed by their PTS (B-frames' first) do not stretch it. Nil below 2.
    func packetInterval(of stream: Stream) -> Double? {
        let byDTS = judgedPackets[stream.index] == .byDTS
        let times = packets.lazy.filter { $0.stream == stream.index && (!byDTS || $0.timestampIsDTS) }.map(\.dts)
        let count = times.count
        guard count > 1, let first = times.min(), let last = times.max(), last > first else { return nil }
        return (last - first) / Double(count - 1)
    }

    /// Intervals between keyframes of the video stream, in seconds.
    var keyframeIntervals: [Double] {
        guard let v = streams.first(where: { $0.kind == .video }) else { return [] }
        return zip(v.keyframes, v.keyframes.dropFirst()).map { $1 - $0 }
    }

    /// The summary a person reads.
    public var text: String {
        var lines: [String] = []
        let seconds = { (v: Double) in String(format: "%.3f s", v) }
        lines.append("file: \(path) (\(formatName), \(fileSize) bytes, \(seconds(duration)), \(packets.count) packets)")
        if let f = finalisation, !f.isFinalised {
            let why = f.wasStreamed ? "it was written as a stream (stdout, a pipe), which never goes back to write its end"
                : f.lacksOnlyMetadata ? "every tag is whole, but its writer left onMetaData out (nginx-rtmp records so)"
                : "the recording was cut off before its end was written (killed, or the power went)"
            lines.append("finalised: NO (\(f.missing.joined(separator: ", "))): \(why), so players show no duration and cannot seek;"
                         + " repair it: livemux repair \(path)")
        }
        for s in streams {
            var line = "stream \(s.index): \(s.kind?.rawValue ?? "other") \(s.codec)" + (s.signalling.map { " (\($0))" } ?? "")
            if s.kind == .video && s.width > 0 { line += " \(s.width)x\(s.height)" }
            if s.kind == .audio { line += " \(s.sampleRate) Hz \(s.channels) ch" }
            let span = duration(of: s)
            let kbps = span > 0 ? Double(s.bytes) * 8 / span / 1000 : 0
            line += String(format: ", %d packets, %.1f kbit/s", s.packets, kbps)
            if s.kind == .video, let interval = packetInterval(of: s) {
                line += String(format: ", %.2f frames/s", 1 / interval)
            }
            lines.append(line)
        }
        lines += notes
        if let v = streams.first(where: { $0.kind == .video }) {
            let first = packets.first { $0.stream == v.index }
            var gop = "GOP: \(v.keyframes.count) keyframe\(v.keyframes.count == 1 ? "" : "s")"
            let intervals = keyframeIntervals
            if let lo = intervals.min(), let hi = intervals.max() {
                let mean = intervals.reduce(0, +) / Double(intervals.count)
                gop += hi - lo < 0.002 ? ", every \(seconds(mean))" : ", every \(seconds(lo)) to \(seconds(hi)) (mean \(seconds(mean)))"
                let span = duration(of: v)
                if span > 0 { gop += String(format: " = %.0f frames", mean * Double(v.packets) / span) }
            }
            gop += first?.isKeyframe == true ? "; starts with a keyframe" : "; does NOT start with a keyframe"
            lines.append(gop)
        }
        let rates = bitrate()
        if let lo = rates.dropLast().min() ?? rates.min(), let hi = rates.dropLast().max() ?? rates.max() {
            let total = duration > 0 ? Double(packets.reduce(0) { $0 + $1.size }) * 8 / duration / 1000 : 0
            lines.append(String(format: "bitrate: %.1f kbit/s overall; per second %.1f to %.1f kbit/s", total, lo, hi))
        }
        if streams.contains(where: { $0.kind == .video }) && streams.contains(where: { $0.kind == .audio }) {
            let at = packets.indices.contains(largestDistancePacket) ? packets[largestDistancePacket] : nil
            let distance = "largest A/V DTS distance in file order \(seconds(largestDistance))"
                + (at.map { " (packet \(largestDistancePacket), DTS \(seconds($0.dts))\($0.position >= 0 ? ", byte \($0.position)" : ""))" } ?? "")
            if isWellInterleaved {
                lines.append("interleaving: good: \(distance), no inversions")
            } else {
                var problems = [distance + (largestDistance > Self.distanceLimit ? " (over \(seconds(Self.distanceLimit)): a player must buffer that much)" : "")]
                if let first = inversions.first {
                    problems.append("\(inversions.count) inversions (a packet's DTS before one already read from the other stream; "
                                    + "first: packet \(first.packet), DTS \(seconds(first.dts)) after \(seconds(first.otherDTS)))")
                } else {
                    problems.append("no inversions")
                }
                if backwardsInStream > 0 { problems.append("\(backwardsInStream) packets with DTS going backwards in their own stream") }
                lines.append("interleaving: BAD: " + problems.joined(separator: "; "))
            }
        }
        return lines.joined(separator: "\n")
    }
}
