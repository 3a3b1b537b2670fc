import Foundation
import XCTest
import POSIX
import FFmpeg
@testable import LiveMux

/// The AudioSpecificConfig built by hand against FFmpeg's own aac encoder.
final class AudioSpecificConfigTests: XCTestCase {
    func testEveryRateIndexAndChannelCountMatchesFFmpegsEncoder() throws {
        FFmpegLog.setLevel(.quiet)
        for rate in AudioSpecificConfig.sampleRates {
            for channels in [1, 2] {
                var s = Encoder.Settings(codecName: "aac", bitRate: 64000, timeBase: Rational(1, Int32(rate)))
                s.sampleRate = rate
                s.channels = channels
                let encoder = try Encoder(s)
                let written = Array(encoder.extradata.prefix(2))
                let ours = try XCTUnwrap(AudioSpecificConfig.make(sampleRate: rate, channels: channels))
                XCTAssertEqual(ours, written, "\(rate) Hz, \(channels) channel(s)")
            }
        }
    }

    func testRefusesRatesOutsideTheTable() {
        XCTAssertNil(AudioSpecificConfig.make(sampleRate: 44000, channels: 2))
        XCTAssertNil(AudioSpecificConfig.make(sampleRate: 48000, channels: 7))
    }

    func testADTSHeaderFields() throws {
        // 48 kHz (index 3), stereo, LC, frame length 371, no CRC.
        let h = try XCTUnwrap(ADTSHeader([0xFF, 0xF1, 0x4C, 0x80, 0x2E, 0x7F, 0xFC][...]))
        XCTAssertEqual(h.objectType, 2)
        XCTAssertEqual(h.sampleRate, 48000)
        XCTAssertEqual(h.channelConfiguration, 2)
        XCTAssertEqual(h.frameLength, 371)
        XCTAssertEqual(h.headerLength, 7)
        XCTAssertNil(ADTSHeader([0x00, 0xF1, 0x4C, 0x80, 0x2E, 0x7F, 0xFC][...]))
    }

    /// Found by `scripts/fuzz normalizer`: an hvcC record claiming 224 arrays of 57,568 units in
    /// 48 bytes stalled FFmpeg 5.1's hevc_mp4toannexb for 35 s. It is now refused at once.
    func testRecordThatClaimsMoreThanItHoldsIsRefusedAtOnce() throws {
        let record: [UInt8] = [0x01, 0xf7] + Array(repeating: 0xe0, count: 43) + [0x00, 0x9b, 0x01]
        XCTAssertFalse(AnnexB.isWellFormedRecord(record, hevc: true))
        XCTAssertFalse(AnnexB.isWellFormedRecord([1, 0x64, 0, 0x1f, 0xff, 0xe1, 0x00, 0x40, 0x67], hevc: false))
        let started = Date()
        let muxer = try Muxer(format: .asf, video: VideoStreamDescription(codec: .hevc),
                              audio: AudioStreamDescription(sampleRate: 44100, channels: 2), onChunk: { _ in })
        XCTAssertThrowsError(try muxer.addVideo(record, pts: 0, timescale: 30, isKeyframe: true, isExtraData: true))
        try? muxer.finish()
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testLengthsBecomeStartCodesInPlaceAndParameterSetsAreFound() throws {
        var bytes: [UInt8] = [0, 0, 0, 2, 0x41, 0x9a, 0, 0, 0, 3, 0x01, 0x02, 0x03]
        bytes.withUnsafeMutableBytes { AnnexB.replaceLengthsWithStartCodes($0) }
        XCTAssertEqual(bytes, [0, 0, 0, 1, 0x41, 0x9a, 0, 0, 0, 1, 0x01, 0x02, 0x03])
        let idrWithSets: [UInt8] = [0, 0, 0, 2, 0x67, 0x42, 0, 0, 0, 2, 0x68, 0xce, 0, 0, 0, 2, 0x65, 0x88]
        XCTAssertTrue(AnnexB.containsParameterSets(lengthPrefixed: idrWithSets, lengthSize: 4, hevc: false))
        XCTAssertFalse(AnnexB.containsParameterSets(lengthPrefixed: Array(idrWithSets.suffix(6)), lengthSize: 4, hevc: false))
        // HEVC: VPS is type 32 (0x40 >> 1); a TRAIL_R slice (type 1, 0x02) is not a parameter set.
        XCTAssertTrue(AnnexB.containsParameterSets(lengthPrefixed: [0, 0, 0, 2, 0x40, 0x01], lengthSize: 4, hevc: true))
        XCTAssertFalse(AnnexB.containsParameterSets(lengthPrefixed: [0, 0, 0, 2, 0x02, 0x01], lengthSize: 4, hevc: true))
    }

    func testLengthPrefixedToAnnexB() {
        XCTAssertEqual(AnnexB.fromLengthPrefixed([0, 0, 0, 2, 0x65, 0x88, 0, 0, 0, 1, 0x41]),
                       [0, 0, 0, 1, 0x65, 0x88, 0, 0, 0, 1, 0x41])
        XCTAssertNil(AnnexB.fromLengthPrefixed([0, 0, 0, 9, 0x65]), "a length past the end is garbage")
        XCTAssertNil(AnnexB.fromLengthPrefixed([0, 0, 0, 0]), "a zero length is garbage")
    }
}

/// The public `Muxer` API fed from a test: the same packets in different packagings must decode
/// identically; bad packets are counted, not fatal; a resolution change works in FLV.
final class MuxerAPITests: TemporaryDirectoryTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        FFmpegLog.setLevel(.quiet)
    }

    @discardableResult
    func run(_ program: String, _ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/\(program)")
        p.arguments = args
        p.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // stderr is small (-v error); read stdout to its end, then stderr.
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    func ffmpeg(_ args: [String]) throws {
        XCTAssertEqual(try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args).status, 0, args.joined(separator: " "))
    }

    /// H.264 (no B-frames, keyframe each 15 frames) + AAC as MP4 (AVCC, raw AAC), and the same
    /// packets as Annex B and ADTS.
    func makeSources(size: String = "160x120", name: String = "src") throws {
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                    "-t", "1", "-c:v", "libx264", "-preset", "veryfast", "-bf", "0", "-g", "15", "-ac", "2", "-c:a", "aac", "\(dir)/\(name).mp4"])
        try ffmpeg(["-i", "\(dir)/\(name).mp4", "-an", "-c:v", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", "\(dir)/\(name).h264"])
        try ffmpeg(["-i", "\(dir)/\(name).mp4", "-vn", "-c:a", "copy", "-f", "adts", "\(dir)/\(name).aac"])
    }

    struct Read {
        var extradata: [UInt8]
        var packets: [(bytes: [UInt8], key: Bool)]
    }

    func read(_ path: String, _ type: MediaType) throws -> Read {
        let ext = URL(fileURLWithPath: path).pathExtension
        let device = try InputDevice(format: ["h264", "hevc", "aac"].contains(ext) ? ext : nil, url: path, options: [])
        let stream = try XCTUnwrap(device.bestStream(type))
        var r = Read(extradata: stream.parameters.extradata, packets: [])
        let p = try Packet()
        while try device.read(into: p) {
            if p.streamIndex == stream.index { r.packets.append((p.bytes, p.isKeyframe)) }
        }
        return r
    }

    /// Feeds video and audio (30 fps, 44.1 kHz) and writes the chunks to a file.
    func mux(_ format: ContainerFormat, video: VideoStreamDescription?, _ v: [(bytes: [UInt8], key: Bool)],
             audio: AudioStreamDescription?, _ a: [(bytes: [UInt8], key: Bool)], name: String,
             extraDataPacket: [UInt8]? = nil) throws -> (path: String, muxer: Muxer) {
        let path = "\(dir)/\(name)"
        let muxer = try Muxer(format: format, video: video, audio: audio, sinks: [try FileSink(path: path)], seekable: true,
                              singleProducer: false)
        // Video and audio from two threads, as an app's capture callbacks would.
        let group = DispatchGroup()
        let errors = ErrorBox()
        if let extraDataPacket { try muxer.addVideo(extraDataPacket, pts: 0, isKeyframe: false, isExtraData: true) }
        DispatchQueue.global().async(group: group) {
            do { for (i, p) in v.enumerated() { try muxer.addVideo(p.bytes, pts: Int64(i), timescale: 30, isKeyframe: p.key) } } catch { errors.set(error) }
        }
        DispatchQueue.global().async(group: group) {
            do { for (i, p) in a.enumerated() { try muxer.addAudio(p.bytes, pts: Int64(i) * 1024, timescale: 44100) } } catch { errors.set(error) }
        }
        group.wait()
        if let e = errors.error { throw e }
        try muxer.finish()
        return (path, muxer)
    }

    func hashes(_ path: String, _ stream: String, _ outputOptions: [String] = []) throws -> [String] {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:\(stream)"] + outputOptions + ["-f", "framemd5", "-"])
        XCTAssertEqual(r.status, 0)
        return r.out.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map(String.init) }
    }

    func decodeErrors(_ path: String) throws -> String {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        return r.err + (r.status == 0 ? "" : "exit \(r.status)")
    }

    func testAnnexBAndAVCCAndADTSAndRawDecodeIdentically() throws {
        try makeSources()
        let avcc = try read("\(dir)/src.mp4", .video), raw = try read("\(dir)/src.mp4", .audio)
        let annexB = try read("\(dir)/src.h264", .video), adts = try read("\(dir)/src.aac", .audio)
        XCTAssertEqual(avcc.packets.count, 30)
        XCTAssertEqual(avcc.extradata.first, 1, "the MP4 carries an avcC record")
        XCTAssertTrue(ADTSHeader.startsADTS(adts.packets[0].bytes))
        let audio = AudioStreamDescription(sampleRate: 44100, channels: 2)
        for format in ContainerFormat.allCases {
            // AVCC with avcC extradata, raw AAC with the config built by hand.
            let a = try mux(format, video: .init(codec: .h264, extradata: avcc.extradata), avcc.packets,
                            audio: audio, raw.packets, name: "avcc.\(format)")
            // Annex B with parameter sets in-band only, ADTS.
            let b = try mux(format, video: .init(codec: .h264), annexB.packets, audio: audio, adts.packets, name: "annexb.\(format)")
            // Annex B with the parameter sets as a separate extradata packet (the iOS API's isExtraData).
            let c = try mux(format, video: .init(codec: .h264), annexB.packets, audio: audio, adts.packets,
                            name: "extrapacket.\(format)", extraDataPacket: avcc.extradata)
            let reference = try hashes("\(dir)/src.mp4", "v")
            XCTAssertEqual(reference.count, 30)
            for out in [a, b, c] {
                XCTAssertEqual(try hashes(out.path, "v"), reference, out.path)
                XCTAssertEqual(try decodeErrors(out.path), "", out.path)
                XCTAssertEqual(out.muxer.warnings, [:], out.path)
                XCTAssertEqual(out.muxer.statisticsSnapshot.video.packetsOut, 30)
            }
            XCTAssertEqual(try hashes(a.path, "a"), try hashes(b.path, "a"), "raw and ADTS audio decode alike")
            XCTAssertEqual(try hashes(a.path, "a").count, raw.packets.count)
        }
    }

    /// `00 00 01` and HEVC's TRAIL_N header (`00 01`) also read as a 4-byte length of 256, which
    /// tiles a 260-byte packet: in an Annex B stream such a packet stays as it is (it was taken as
    /// length-prefixed and cut, and the frame was lost).
    func testAmbiguousPacketOfAnAnnexBStreamStaysAnnexB() throws {
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-frames:v", "1", "-c:v", "libx265",
                    "-x265-params", "log-level=none", "-f", "hevc", "\(dir)/key.hevc"])
        let key = try XCTUnwrap(read("\(dir)/key.hevc", .video).packets.first)
        let normalizer = try VideoNormalizer(codec: .hevc, width: nil, height: nil, extradata: nil)
        _ = try normalizer.process(try Packet(copying: key.bytes), isKeyframe: true)
        let ambiguous: [UInt8] = [0, 0, 1, 0, 1] + (0..<255).map { UInt8(2 + $0 % 200) }
        XCTAssertTrue(AnnexB.isLengthPrefixed(ambiguous), "the packet reads both ways")
        XCTAssertEqual(try normalizer.process(try Packet(copying: ambiguous), isKeyframe: false).packet.bytes, ambiguous)
    }

    func testBadPacketsAreCountedAndTheOutputStaysClean() throws {
        try makeSources()
        let annexB = try read("\(dir)/src.h264", .video), adts = try read("\(dir)/src.aac", .audio)
        let warnings = WarningBox()
        let path = "\(dir)/bad.flv"
        let muxer = try Muxer(format: .flv, video: .init(codec: .h264), audio: .init(sampleRate: 44100, channels: 2),
                              sinks: [try FileSink(path: path)], seekable: true, onWarning: { warnings.append($0) })
        // A P-frame before any parameter set.
        try muxer.addVideo(annexB.packets[1].bytes, pts: 0, timescale: 30, isKeyframe: false)
        var t: Int64 = 0
        for (i, p) in annexB.packets.enumerated() {
            try muxer.addVideo(p.bytes, pts: t, timescale: 30, isKeyframe: p.key)
            t += 1
            if i == 5 {
                try muxer.addVideo((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }, pts: t, timescale: 30, isKeyframe: false)  // garbage
                try muxer.addVideo(p.bytes, pts: t - 3, timescale: 30, isKeyframe: false)  // backwards
            }
        }
        for (i, p) in adts.packets.enumerated() {
            var bytes = p.bytes
            if i == 3 { bytes.removeLast(10) }  // the header's length now runs past the end
            if i == 4 { bytes = Array(bytes.dropFirst(2)) }  // no header at all
            if i == 5 { bytes[2] = bytes[2] & ~0x3C | 3 << 2 }  // 48 kHz in a 44.1 kHz stream
            try muxer.addAudio(bytes, pts: Int64(i) * 1024, timescale: 44100)
        }
        try muxer.finish()
        let w = muxer.warnings
        XCTAssertEqual(w[.videoBeforeParameterSets], 1)
        XCTAssertEqual(w[.unreadableVideo], 1)
        XCTAssertEqual(w[.timestampNotIncreasing], 1)
        XCTAssertEqual(w[.unreadableAudio], 2)
        XCTAssertEqual(w[.audioParametersChanged], 1)
        XCTAssertEqual(warnings.lines.count, 5, "one line per kind: \(warnings.lines)")
        XCTAssertEqual(try hashes(path, "v"), try hashes("\(dir)/src.mp4", "v"), "every good frame, nothing else")
        XCTAssertEqual(try hashes(path, "a").count, adts.packets.count - 3)
        XCTAssertThrowsError(try muxer.addVideo(annexB.packets[0].bytes, pts: 100, isKeyframe: true), "finished")
    }

    /// Into FLV, AVCC packets under an avcC record pass through untouched; an Annex B packet ends
    /// that for the rest of the stream and carries the Annex B parameter sets, so the FLV muxer
    /// converts from there on. Into ASF the same input becomes Annex B.
    func testAVCCPassesThroughIntoFLVUntilAnnexBArrives() throws {
        try makeSources()
        let avcc = try read("\(dir)/src.mp4", .video), annexB = try read("\(dir)/src.h264", .video)
        let flv = try VideoNormalizer(codec: .h264, width: nil, height: nil, extradata: avcc.extradata, prefersLengthPrefixed: true)
        XCTAssertEqual(flv.extradata, avcc.extradata, "FLV gets the avcC record itself")
        for p in avcc.packets.prefix(15) {
            let out = try flv.process(try Packet(copying: p.bytes), isKeyframe: p.key)
            XCTAssertEqual(out.packet.bytes, p.bytes, "passed through untouched")
            XCTAssertNil(out.packet.newExtradata)
        }
        XCTAssertTrue(flv.passesThrough)
        let switched = try flv.process(try Packet(copying: annexB.packets[15].bytes), isKeyframe: annexB.packets[15].key)
        XCTAssertFalse(flv.passesThrough)
        XCTAssertEqual(switched.packet.newExtradata.map { AnnexB.hasStartCode($0) }, true, "Annex B sets tell the muxer")
        XCTAssertNil(switched.changedExtradata, "the same parameter sets: not a change")
        let after = try flv.process(try Packet(copying: avcc.packets[16].bytes), isKeyframe: avcc.packets[16].key)
        XCTAssertTrue(AnnexB.hasStartCode(after.packet.bytes), "AVCC after the switch is converted")

        let asf = try VideoNormalizer(codec: .h264, width: nil, height: nil, extradata: avcc.extradata, prefersLengthPrefixed: false)
        XCTAssertFalse(asf.passesThrough)
        for p in avcc.packets.prefix(2) {
            XCTAssertTrue(AnnexB.hasStartCode(try asf.process(try Packet(copying: p.bytes), isKeyframe: p.key).packet.bytes))
        }

        // End to end: half AVCC, half Annex B into FLV decodes frame for frame.
        let mixed = Array(avcc.packets.prefix(15)) + Array(annexB.packets.suffix(15))
        let out = try mux(.flv, video: .init(codec: .h264, extradata: avcc.extradata), mixed, audio: nil, [], name: "mixed.flv")
        XCTAssertEqual(try hashes(out.path, "v"), try hashes("\(dir)/src.mp4", "v"))
        XCTAssertEqual(try decodeErrors(out.path), "")
        XCTAssertEqual(out.muxer.warnings, [:])
    }

    /// New SPS/PPS mid-stream: FLV writes a new AVC sequence header; ASF refuses.
    func testResolutionChange() throws {
        try makeSources(size: "160x120", name: "small")
        try makeSources(size: "320x240", name: "large")
        let small = try read("\(dir)/small.h264", .video), large = try read("\(dir)/large.h264", .video)
        let both = small.packets + large.packets
        let out = try mux(.flv, video: .init(codec: .h264), both, audio: nil, [], name: "change.flv")
        XCTAssertEqual(try decodeErrors(out.path), "")
        let r = try run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=width,height", "-of", "csv=p=0", out.path])
        // The first frame of the new size carries side data, which adds a field and a line.
        let sizes = r.out.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        XCTAssertEqual(sizes.count, 60)
        XCTAssertEqual(sizes.prefix(30).filter { $0.hasPrefix("160,120") }.count, 30)
        XCTAssertEqual(sizes.suffix(30).filter { $0.hasPrefix("320,240") }.count, 30)
        // -autoscale 0: hash each frame at its own size.
        XCTAssertEqual(try hashes(out.path, "v", ["-autoscale", "0"]), try hashes("\(dir)/small.mp4", "v") + hashes("\(dir)/large.mp4", "v"))

        let asf = try Muxer(format: .asf, video: .init(codec: .h264), audio: nil, onChunk: { _ in })
        for (i, p) in small.packets.enumerated() { try asf.addVideo(p.bytes, pts: Int64(i), timescale: 30, isKeyframe: p.key) }
        XCTAssertThrowsError(try asf.addVideo(large.packets[0].bytes, pts: 30, timescale: 30, isKeyframe: true)) { error in
            XCTAssertTrue(String(describing: error).contains("ASF cannot change its header"), "\(error)")
        }
        try asf.finish()
    }

    /// Chunks through the AsyncSequence: header first, trailer last, and nothing lost.
    func testChunksAsAsyncSequence() async throws {
        try makeSources()
        let annexB = try read("\(dir)/src.h264", .video)
        let muxer = try Muxer(format: .flv, video: .init(codec: .h264, width: 160, height: 120), audio: nil)
        let chunks = muxer.chunks
        let collector = Task { () -> [Chunk] in
            var all: [Chunk] = []
            for await c in chunks { all.append(c) }
            return all
        }
        for (i, p) in annexB.packets.enumerated() { try muxer.addVideoData(p.bytes, size: p.bytes.count, timestamp: Int64(i) * 33, isKeyframe: p.key, isExtraData: false) }
        try muxer.finish()
        let all = await collector.value
        XCTAssertEqual(all.first?.kind, .header)
        XCTAssertEqual(all.last?.kind, .trailer)
        XCTAssertEqual(all.filter { if case .media = $0.kind { return true } else { return false } }.count, 30)
        XCTAssertEqual(all.filter { if case .media(_, _, true) = $0.kind { return true } else { return false } }.count, 2)
        let path = "\(dir)/stream.flv"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(all.flatMap(\.bytes))))
        XCTAssertEqual(try hashes(path, "v"), try hashes("\(dir)/src.mp4", "v"))
    }

    func testNothingWrittenWithoutParameters() throws {
        let muxer = try Muxer(format: .asf, video: .init(codec: .h264), audio: nil, onChunk: { _ in XCTFail("no chunk expected") })
        try muxer.addVideo([0, 0, 0, 1, 0x41, 0x9a, 0x00, 0x10], pts: 0, isKeyframe: false)
        XCTAssertThrowsError(try muxer.finish())
    }
}

/// The first error a callback met, from whichever thread (read by the test).
final class ErrorBox: Sendable {
    private let first = Locked<Error?>(nil)
    var error: Error? { first.withLock { $0 } }
    func set(_ e: Error) { first.withLock { if $0 == nil { $0 = e } } }
}

final class WarningBox: Sendable {
    private let said = Locked<[String]>([])
    func append(_ s: String) { said.withLock { $0.append(s) } }
    var lines: [String] { said.withLock { $0 } }
}
