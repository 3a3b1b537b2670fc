import Foundation
import FFmpeg
import POSIX

/// Muxes pre-encoded files into ASF or FLV without re-encoding: one reader thread per input file
/// feeds a `Muxer`. `init` opens everything (and creates the output file last); `start` runs;
/// `wait` returns when done and throws the first failure.
public final class FileMuxJob: LiveJob, @unchecked Sendable {
    // Set in init and then only read; each reader thread owns its input.
    private struct Reader {
        let device: InputDevice
        let video: InputDevice.Stream?
        let audio: InputDevice.Stream?
        /// Elementary video: timestamps come from the frame count at `fps`.
        let rawVideo: Bool
        /// Its reads may block for ever (a pipe): they go through a `DeviceReader`, so a stop
        /// never waits for one.
        let mayBlock: Bool
    }

    private let readers: [Reader]
    /// The `DeviceReader`s of inputs that may block, while they run: a stop wakes them.
    private let blockingReads = Locked<[DeviceReader]>([])
    private let muxer: Muxer
    private let fps: FrameRate
    private let realtime: Bool
    /// The files written, so that one a failed job left empty is removed.
    private let outputPaths: [String]
    private var session: MuxSession { muxer.session }
    /// When reading started (µs, monotonic): a paced packet is handed over no earlier than this
    /// plus its DTS. Set in `start`, before the readers run.
    private var startTime: Int64 = 0
    /// Packets back from the mux thread, to read into again (one reader only: with two, each
    /// would free the other's buffers, which is what the pool avoids).
    private let pool: PacketPool?
    /// Packets read per stream, and video packets with no timestamp to place them by.
    private let counts = Locked<(offered: PerStream<Int>, unplaced: Int)>((PerStream(repeating: 0), 0))
    private let allowDrops: Bool
    /// A larger share of a stream dropped fails the job (unless `allowDrops`): the output is
    /// playable, but not what the input held.
    static let tolerableDropShare = 0.01
    /// Unpaced, the mux thread takes this many packets per wake (see `MuxQueue`).
    static let readBatch = 128
    /// Packets kept to read into again (see `PacketPool`): more than the queue and a batch hold.
    static let recycledPackets = 512

    /// Opens the inputs, checks their codecs, and creates the output.
    public init(_ c: MuxConfiguration, report: @escaping @Sendable (String) -> Void = { _ in }) throws {
        LogLevel.applyChosen()
        if c.input == nil && c.video == nil && c.audio == nil {
            throw LiveMuxError.invalid("nothing to mux: give --input FILE, or --video FILE and/or --audio FILE")
        }
        if c.input != nil && (c.video != nil || c.audio != nil) {
            throw LiveMuxError.invalid("--input carries both streams: use it alone, or --video and --audio instead")
        }
        allowDrops = c.allowDrops
        realtime = c.realtime
        var readers: [Reader] = []
        if let path = c.input {
            let d = try Self.open(path, fps: c.fps)
            let v = d.bestStream(.video), a = d.bestStream(.audio)
            if v == nil && a == nil { throw LiveMuxError.input("\(path) has no video or audio stream") }
            readers.append(Reader(device: d, video: v, audio: a, rawVideo: Self.isRawVideo(d), mayBlock: Self.mayBlock(path)))
        } else {
            if let path = c.video {
                let d = try Self.open(path, fps: c.fps)
                guard let v = d.bestStream(.video) else { throw LiveMuxError.input("\(path) has no video stream (give H.264 or HEVC, elementary or in a container)") }
                readers.append(Reader(device: d, video: v, audio: nil, rawVideo: Self.isRawVideo(d), mayBlock: Self.mayBlock(path)))
            }
            if let path = c.audio {
                let d = try Self.open(path, fps: c.fps)
                guard let a = d.bestStream(.audio) else { throw LiveMuxError.input("\(path) has no audio stream (give ADTS AAC or a container with AAC)") }
                readers.append(Reader(device: d, video: nil, audio: a, rawVideo: false, mayBlock: Self.mayBlock(path)))
            }
        }
        fps = Self.frameRate(c, elementary: readers.first { $0.rawVideo }?.device, report: report)
        var videoDescription: VideoStreamDescription?
        var audioDescription: AudioStreamDescription?
        for r in readers {
            if let v = r.video {
                let codec: VideoCodec
                if v.parameters.isH264 { codec = .h264 } else if v.parameters.isHEVC { codec = .hevc } else {
                    throw LiveMuxError.unsupported("\(r.device.formatName) video is \(v.parameters.codecName): livemux mux takes H.264 or HEVC (re-encode with livemux record --input)")
                }
                let extradata = v.parameters.extradata
                videoDescription = VideoStreamDescription(codec: codec,
                                                          width: v.parameters.width > 0 ? v.parameters.width : nil,
                                                          height: v.parameters.height > 0 ? v.parameters.height : nil,
                                                          extradata: extradata.isEmpty ? nil : extradata)
            }
            if let a = r.audio {
                guard a.parameters.isAAC else {
                    throw LiveMuxError.unsupported("the audio is \(a.parameters.codecName): livemux mux takes AAC (re-encode with livemux record --input)")
                }
                let extradata = a.parameters.extradata
                audioDescription = AudioStreamDescription(sampleRate: a.parameters.sampleRate, channels: a.parameters.channelCount,
                                                          extradata: extradata.isEmpty ? nil : extradata)
            }
        }
        pool = readers.count == 1 ? PacketPool(limit: Self.recycledPackets) : nil
        outputPaths = c.outputs.destinations.compactMap {
            if case .file(let path) = $0.destination { return path }
            return nil
        }
        // Unpaced, files are read as fast as they go: the mux thread takes packets in batches of
        // 128 and hands them back to be read into again. Paced, every packet is live.
        muxer = try Muxer(video: videoDescription, audio: audioDescription, route: nil, outputs: c.outputs,
                          queueCapacity: Muxer.defaultQueueCapacity, singleProducer: readers.count == 1,
                          wakeBatch: realtime ? 1 : Self.readBatch,
                          streamingASFPacketSize: realtime ? MuxSession.liveASFPacketSize : nil,
                          recycle: pool, onChunk: nil, onWarning: report)
        self.readers = readers
    }

    private static func isRawVideo(_ d: InputDevice) -> Bool { d.formatName == "h264" || d.formatName == "hevc" }

    /// The rate elementary video is timed at: `--fps`, else what the stream states, else 25.
    private static func frameRate(_ c: MuxConfiguration, elementary: InputDevice?, report: (String) -> Void) -> FrameRate {
        if let given = c.fps { return given }
        guard let device = elementary, let path = c.input ?? c.video else { return fallbackFrameRate }
        guard !SourceSpec.isStandardInput(path) else {
            // A pipe cannot be read twice: its parameter sets are not looked at ahead of the muxing.
            report("elementary video on stdin: timing it at \(fallbackFrameRate) fps (its timing info cannot be read ahead from a pipe); give --fps if that is wrong")
            return fallbackFrameRate
        }
        let stated = ElementaryFrameRate.read(path, hevc: device.formatName == "hevc").flatMap(FrameRate.init)
        if let stated, stated.isSupported { return stated }
        let problem = stated.map { "states \($0) fps, more than \(FrameRate.maxFramesPerSecond)" } ?? "states no frame rate (no timing info in its parameter sets)"
        report("\(path) \(problem): timing it at \(fallbackFrameRate) fps; give --fps if that is wrong")
        return fallbackFrameRate
    }

    /// FFmpeg's rate for elementary video that states none.
    static let fallbackFrameRate = FrameRate(25)!

    /// Opens a file; elementary streams are named by extension, and raw video gets `--fps` if given.
    private static func open(_ path: String, fps: FrameRate?) throws -> InputDevice {
        guard SourceSpec.isStandardInput(path) || FileManager.default.fileExists(atPath: path) else {
            throw LiveMuxError.input("\(path) does not exist")
        }
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        var format: String? = nil
        var options: [(String, String)] = []
        switch ext {
        case "h264", "264": format = "h264"
        case "h265", "265", "hevc": format = "hevc"
        case "aac", "adts": format = "aac"
        default: break
        }
        if let fps, format == "h264" || format == "hevc" { options.append(("framerate", fps.description)) }
        do {
            return try InputDevice(format: format, url: path, options: options, reparse: false)
        } catch let error as FFmpegError {
            throw ExplainedError("cannot read \(path): \(error.message) (give H.264/HEVC and AAC in a container such as MP4,"
                                 + " MKV, FLV, ASF or TS, or elementary .h264, .h265 and .aac files)", cause: error)
        }
    }

    /// Starts one reader thread per input.
    public func start() {
        startTime = Timestamp.monotonicMicroseconds()
        for (i, r) in readers.enumerated() {
            session.spawn("livemux-read-\(i)", onFailure: stop) { [self] in try read(r) }
        }
    }

    /// Stops reading; what was read is muxed and the trailer written. From any thread.
    public func stop() {
        session.stopSignal.request()
        readers.forEach { $0.device.interrupt() }
        blockingReads.withLock { $0 }.forEach { $0.wake() }
    }

    private static func mayBlock(_ path: String) -> Bool { SourceSpec(format: nil, url: path).readsMayBlock }

    private var isStopped: Bool { session.stopSignal.isRequested }

    private func read(_ r: Reader) throws {
        var spare: [Packet] = []
        let ahead = r.mayBlock ? DeviceReader.start(r.device) : nil
        if let ahead { blockingReads.withLock { $0.append(ahead) } }
        defer { ahead?.abandon() }
        func next() throws -> Packet? {
            guard !isStopped else { return nil }
            if let ahead { return try ahead.nextPacket { isStopped } }
            // Each packet is handed over to the muxer as it was read: no copy of its payload.
            if spare.isEmpty { pool?.takeAll(into: &spare) }
            let packet = try spare.popLast() ?? Packet()
            return try r.device.read(into: packet) ? packet : nil
        }
        // The first packets wait until the file's timeline is known (see InputTimeline).
        var leading: [Packet] = []
        while !InputTimeline.hasEnough(leading, video: r.video, audio: r.audio, rawVideo: r.rawVideo), let p = try next() {
            leading.append(p)
        }
        var timeline = try InputTimeline(video: r.video, audio: r.audio, rawVideo: r.rawVideo, fps: fps, leading: leading)
        var offered = PerStream(repeating: 0), unplaced = 0
        defer { count(offered: offered, unplaced: unplaced) }
        for packet in leading { try hand(packet, &timeline, &offered, &unplaced) }
        leading.removeAll()
        while let packet = try next() { try hand(packet, &timeline, &offered, &unplaced) }
        timeline.endVideo()
        while let (packet, place) = timeline.nextVideo() { try handVideo(packet, at: place, &unplaced) }
    }

    /// Gives one demuxed packet to the muxer, placed on the file's timeline.
    private func hand(_ packet: Packet, _ timeline: inout InputTimeline, _ offered: inout PerStream<Int>, _ unplaced: inout Int) throws {
        switch timeline.stream(of: packet) {
        case .video:
            offered[.video] += 1
            timeline.add(video: packet)
            while let (packet, place) = timeline.nextVideo() { try handVideo(packet, at: place, &unplaced) }
        case .audio:
            offered[.audio] += 1
            let t = timeline.audio()
            guard pace(t.pts, timescale: t.timescale) else { return }
            try muxer.addAudio(packet, pts: t.pts, timescale: t.timescale)
        case nil:
            break
        }
    }

    /// Gives one video packet to the muxer at its place; nil: it has no timestamp and is dropped.
    private func handVideo(_ packet: Packet, at place: InputTimeline.Place?, _ unplaced: inout Int) throws {
        if let sets = packet.newExtradata {
            try muxer.addVideo(sets, pts: 0, isKeyframe: false, isExtraData: true)
        }
        guard let t = place else {
            unplaced += 1
            return
        }
        guard pace(t.dts, timescale: t.timescale) else { return }
        try muxer.addVideo(packet, pts: t.pts, dts: t.dts, timescale: t.timescale, isKeyframe: packet.isKeyframe)
    }

    /// With `realtime`, waits until the packet's time has come; false when stopped meanwhile.
    private func pace(_ t: Int64, timescale: Int32) -> Bool {
        guard realtime else { return true }
        let due = startTime + Timestamp.rescale(t, from: Rational(1, timescale), to: Rational(1, 1_000_000))
        return session.stopSignal.sleep(untilMonotonic: due)
    }

    private func count(offered more: PerStream<Int>, unplaced n: Int) {
        counts.withLock { c in
            c.offered.video += more.video
            c.offered.audio += more.audio
            c.unplaced += n
        }
    }

    /// The error for a stream of which more than `tolerableDropShare` was dropped, if any.
    private func dropFailure() -> Error? {
        guard !allowDrops else { return nil }
        let s = muxer.statisticsSnapshot
        let (given, unstamped) = counts.withLock { $0 }
        for kind in StreamKind.allCases {
            let dropped = (kind == .video ? s.video.dropped + unstamped : s.audio.dropped)
            guard given[kind] > 0, Double(dropped) > Self.tolerableDropShare * Double(given[kind]) else { continue }
            var reasons = muxer.warnings.keys.map(\.description).sorted()
            if kind == .video && unstamped > 0 { reasons.append("video packets without any timestamp were dropped") }
            let percent = Int((100 * Double(dropped) / Double(given[kind])).rounded())
            return LiveMuxError.input("\(dropped) of \(given[kind]) \(kind.rawValue) packets (\(percent)%) were dropped (\(reasons.joined(separator: "; "))): the output is incomplete; add --allow-drops to accept it")
        }
        return nil
    }

    /// Waits for the readers, finishes the muxer, and throws the first failure, or a drop
    /// failure (see `tolerableDropShare`).
    public func wait() throws {
        session.waitForProducers()
        do {
            try muxer.finish()
            if let dropped = dropFailure() { throw dropped }
        } catch {
            // A muxer that never wrote a byte leaves no empty file behind.
            for path in outputPaths {
                if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size == 0 {
                    try? FileManager.default.removeItem(atPath: path)
                }
            }
            throw error
        }
    }

    /// With `--listen`: the URLs viewers can open (with the port bound, if 0 was asked for).
    public var viewerURLs: [String] { session.viewerURLs }
    public var browserURLs: [String] { session.browserURLs }
    public var dashboardURL: String? { session.dashboardURL }

    /// Counters for the progress line.
    public var statisticsSnapshot: StatisticsSnapshot { muxer.statisticsSnapshot }

    /// How many packets of each kind were dropped.
    public var warnings: [MuxerWarning: Int] { muxer.warnings }
}
