// MuxFiles: reads an H.264 Annex B elementary stream and an ADTS AAC file, splits them into
// packets itself (as an app receiving packets from a hardware encoder would get them), and muxes
// them into ASF or FLV with LiveMux's public API.
//
//   MuxFiles video.h264 audio.aac out.flv [fps]
import Foundation
import LiveMux

/// Splits Annex B bytes into access units: a new one starts at an access unit delimiter, SPS or
/// SEI after a picture, or at a slice whose first_mb_in_slice is 0 (its first bit is 1).
func accessUnits(_ data: [UInt8]) -> [(bytes: [UInt8], isKeyframe: Bool)] {
    var starts: [Int] = []  // offsets of start codes
    var i = 0
    while i + 3 <= data.count {
        if data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 {
            starts.append(i > 0 && data[i - 1] == 0 ? i - 1 : i)
            i += 3
        } else {
            i += 1
        }
    }
    var units: [(bytes: [UInt8], isKeyframe: Bool)] = []
    var current: [UInt8] = [], hasPicture = false, isKey = false
    for (n, start) in starts.enumerated() {
        let end = n + 1 < starts.count ? starts[n + 1] : data.count
        let nal = Array(data[start..<end])
        let headerAt = nal[2] == 1 ? 3 : 4
        guard headerAt < nal.count else { continue }
        let type = nal[headerAt] & 0x1F
        let isSlice = type == 1 || type == 5
        let firstSlice = isSlice && headerAt + 1 < nal.count && nal[headerAt + 1] & 0x80 != 0
        if hasPicture && ((6...9).contains(type) || firstSlice) {
            units.append((current, isKey))
            current = []
            hasPicture = false
            isKey = false
        }
        current += nal
        if isSlice { hasPicture = true }
        if type == 5 { isKey = true }
    }
    if hasPicture { units.append((current, isKey)) }
    return units
}

/// Splits ADTS bytes into frames by the length in each header.
func adtsFrames(_ data: [UInt8]) -> [[UInt8]] {
    var frames: [[UInt8]] = []
    var i = 0
    while i + 7 <= data.count, data[i] == 0xFF, data[i + 1] & 0xF0 == 0xF0 {
        let length = Int(data[i + 3] & 0x03) << 11 | Int(data[i + 4]) << 3 | Int(data[i + 5] >> 5)
        guard length > 7, i + length <= data.count else { break }
        frames.append(Array(data[i..<(i + length)]))
        i += length
    }
    return frames
}

let args = CommandLine.arguments
guard args.count >= 4 else {
    FileHandle.standardError.write("usage: MuxFiles video.h264 audio.aac out.asf|out.flv [fps]\n".data(using: .utf8)!)
    exit(64)
}
let fps = args.count > 4 ? Int64(args[4]) ?? 25 : 25
let video = accessUnits(Array(try Data(contentsOf: URL(fileURLWithPath: args[1]))))
let audio = adtsFrames(Array(try Data(contentsOf: URL(fileURLWithPath: args[2]))))
let format: ContainerFormat = args[3].hasSuffix(".flv") ? .flv : .asf

do {
    let muxer = try Muxer(format: format,
                          video: VideoStreamDescription(codec: .h264),  // size and SPS/PPS come in-band
                          audio: AudioStreamDescription(sampleRate: 48000, channels: 2),  // ADTS headers win
                          sinks: [try FileSink(path: args[3])], seekable: true,
                          singleProducer: false,  // a thread per stream (below)
                          onWarning: { FileHandle.standardError.write("warning: \($0)\n".data(using: .utf8)!) })
    // Two threads, like an app's video and audio encoder callbacks.
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
        for (n, unit) in video.enumerated() {
            try? muxer.addVideo(unit.bytes, pts: Int64(n), timescale: Int32(fps), isKeyframe: unit.isKeyframe)
        }
    }
    DispatchQueue.global().async(group: group) {
        for (n, frame) in audio.enumerated() {
            // Stamped by the sample count (1024 per frame) at 48 kHz: exact.
            try? muxer.addAudio(frame, pts: Int64(n) * 1024, timescale: 48000)
        }
    }
    group.wait()
    try muxer.finish()
    let s = muxer.statisticsSnapshot
    print("muxed \(s.video.packetsOut) video and \(s.audio.packetsOut) audio packets into \(args[3])")
} catch {
    FileHandle.standardError.write("error: \(error)\n".data(using: .utf8)!)
    exit(1)
}
