import Foundation
import FFmpeg

/// What `livemux mux` needs: where the encoded streams come from and where they go.
public struct MuxConfiguration: Sendable {
    /// One file whose first video and first audio stream are taken as they are.
    public var input: String?
    /// A video file: an H.264/HEVC elementary stream (`.h264`, `.264`, `.h265`, `.hevc`) or any container.
    public var video: String?
    /// An audio file: ADTS (`.aac`) or any container with AAC.
    public var audio: String?
    /// Frame rate of elementary video streams, which carry no timing (default 25, as FFmpeg's).
    public var fps: Int?
    /// The container written.
    public var format: ContainerFormat = .asf
    /// How FLV signals HEVC.
    public var flvHEVC = FLVHEVCMode.enhanced
    /// Where it goes.
    public var output: Destination = .standardOutput

    /// An empty configuration; set an input and the output.
    public init() {}
}

/// Muxes pre-encoded files into ASF or FLV without re-encoding: one reader thread per input file
/// feeds a `Muxer`. `init` opens everything (and creates the output file last); `start` runs;
/// `wait` returns when done and throws the first failure.
public final class FileMuxJob: @unchecked Sendable {
    // Set in init and then only read; each reader thread owns its input.
    private struct Reader {
        let device: InputDevice
        let video: InputDevice.Stream?
        let audio: InputDevice.Stream?
        /// Elementary video: timestamps come from the frame count at `fps`.
        let rawVideo: Bool
    }

    private let readers: [Reader]
    private let muxer: Muxer
    private let fps: Int
    private let outputPath: String?
    private let group = DispatchGroup()
    /// Packets back from the mux thread, to read into again (one reader only: with two, each
    /// would free the other's buffers, which is what the pool avoids).
    private let pool: PacketPool?
    private let lock = NSLock()
    private var failure: Error?  // guarded by `lock`
    private var stopped = false  // guarded by `lock`

    /// Opens the inputs, checks their codecs, and creates the output.
    public init(_ c: MuxConfiguration, report: @escaping @Sendable (String) -> Void = { _ in }) throws {
        if c.input == nil && c.video == nil && c.audio == nil {
            throw LiveMuxError.invalid("nothing to mux: give --input FILE, or --video FILE and/or --audio FILE")
        }
        if c.input != nil && (c.video != nil || c.audio != nil) {
            throw LiveMuxError.invalid("--input carries both streams: use it alone, or --video and --audio instead")
        }
        fps = c.fps ?? 25
        var readers: [Reader] = []
        if let path = c.input {
            let d = try Self.open(path, fps: fps)
            let v = d.bestStream(.video), a = d.bestStream(.audio)
            if v == nil && a == nil { throw LiveMuxError.input("\(path) has no video or audio stream") }
            readers.append(Reader(device: d, video: v, audio: a, rawVideo: Self.isRawVideo(d)))
        } else {
            if let path = c.video {
                let d = try Self.open(path, fps: fps)
                guard let v = d.bestStream(.video) else { throw LiveMuxError.input("\(path) has no video stream") }
                readers.append(Reader(device: d, video: v, audio: nil, rawVideo: Self.isRawVideo(d)))
            }
            if let path = c.audio {
                let d = try Self.open(path, fps: fps)
                guard let a = d.bestStream(.audio) else { throw LiveMuxError.input("\(path) has no audio stream") }
                readers.append(Reader(device: d, video: nil, audio: a, rawVideo: false))
            }
        }
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
        pool = readers.count == 1 ? PacketPool(limit: 512) : nil
        // Last, the output: nothing is created unless everything before succeeded.
        let sink: ChunkSink
        switch c.output {
        case .file(let path):
            sink = try FileSink(path: path)
            outputPath = path
        case .standardOutput:
            sink = StandardOutputSink()
            outputPath = nil
        case .network(let url):
            // Not wired up yet: URL outputs need the reconnect policy and queue of `record`.
            throw LiveMuxError.unsupported("livemux mux writes to a file or stdout, not \(maskedURL(url)): pipe it, e.g. -o - -f flv | ffmpeg -i - -c copy -f flv URL")
        }
        let seekable: Bool
        if case .file = c.output { seekable = true } else { seekable = false }
        // Files are read as fast as they go: the mux thread takes packets in batches of 32 and
        // hands them back to be read into again.
        muxer = try Muxer(format: c.format, video: videoDescription, audio: audioDescription,
                          sinks: [sink], seekable: seekable, flvHEVC: c.flvHEVC, queueCapacity: 256,
                          singleProducer: readers.count == 1, wakeBatch: 32, recycle: pool,
                          onChunk: nil, onWarning: report)
        self.readers = readers
    }

    private static func isRawVideo(_ d: InputDevice) -> Bool { d.formatName == "h264" || d.formatName == "hevc" }

    /// Opens a file; elementary streams are named by extension, and raw video gets the frame rate.
    private static func open(_ path: String, fps: Int) throws -> InputDevice {
        guard FileManager.default.fileExists(atPath: path) else {
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
        if format == "h264" || format == "hevc" { options.append(("framerate", String(fps))) }
        do {
            return try InputDevice(format: format, url: path, options: options, reparse: false)
        } catch {
            throw LiveMuxError.input("cannot read \(path): \(error)")
        }
    }

    /// Starts one reader thread per input.
    public func start() {
        for (i, r) in readers.enumerated() {
            group.enter()
            let t = Thread { [self] in
                do { try read(r) } catch { record(error) }
                group.leave()
            }
            t.name = "livemux-read-\(i)"
            t.stackSize = 4 << 20
            t.start()
        }
    }

    /// Stops reading; what was read is muxed and the trailer written. From any thread.
    public func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func record(_ error: Error) {
        lock.lock()
        if failure == nil { failure = error }
        stopped = true
        lock.unlock()
    }

    private func read(_ r: Reader) throws {
        var videoFrames: Int64 = 0, audioFrames: Int64 = 0
        var firstVideoDTS: Int64? = nil
        var spare: [Packet] = []
        while !isStopped {
            // Each packet is handed over to the muxer as it was read: no copy of its payload.
            if spare.isEmpty { pool?.takeAll(into: &spare) }
            let packet = spare.popLast() ?? Packet()
            guard try r.device.read(into: packet) else { break }
            if let v = r.video, packet.streamIndex == v.index {
                if let sets = packet.newExtradata {
                    try muxer.addVideo(sets, pts: 0, isKeyframe: false, isExtraData: true)
                }
                if r.rawVideo {
                    // An elementary stream has no timing: frame n is at n / fps.
                    try muxer.addVideo(packet, pts: videoFrames, timescale: Int32(fps), isKeyframe: packet.isKeyframe)
                } else {
                    let tb = v.timeBase
                    var dts = packet.dts != Timestamp.none ? packet.dts : packet.pts
                    var pts = packet.pts != Timestamp.none ? packet.pts : dts
                    guard dts != Timestamp.none else { continue }
                    // The video's first packet is zero.
                    if firstVideoDTS == nil { firstVideoDTS = dts }
                    dts -= firstVideoDTS!
                    pts -= firstVideoDTS!
                    try muxer.addVideo(packet, pts: pts * Int64(tb.num), dts: dts * Int64(tb.num),
                                       timescale: tb.den, isKeyframe: packet.isKeyframe)
                }
                videoFrames += 1
            } else if let a = r.audio, packet.streamIndex == a.index {
                // Audio is timed by its frame count (1024 samples each): exact, no drift.
                try muxer.addAudio(packet, pts: audioFrames * 1024, timescale: Int32(a.parameters.sampleRate))
                audioFrames += 1
            }
        }
    }

    /// Waits for the readers, finishes the muxer, and throws the first failure.
    public func wait() throws {
        group.wait()
        var finishError: Error? = nil
        do { try muxer.finish() } catch { finishError = error }
        lock.lock()
        let f = failure ?? finishError
        lock.unlock()
        if let f {
            // A muxer that never wrote a byte leaves no empty file behind.
            if let path = outputPath, let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size == 0 {
                try? FileManager.default.removeItem(atPath: path)
            }
            throw f
        }
    }

    /// Counters for the progress line.
    public var statisticsSnapshot: StatisticsSnapshot { muxer.statisticsSnapshot }

    /// How many packets of each kind were dropped.
    public var warnings: [MuxerWarning: Int] { muxer.warnings }
}
