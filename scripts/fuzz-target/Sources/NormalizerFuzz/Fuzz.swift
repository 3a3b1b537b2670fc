import FuzzDriver
import LiveMux

/// libFuzzer's entry point. The first byte picks the container, the codec (and how FLV signals
/// HEVC: LiveMux's own FLV tags and hvcC builder read the parameter sets) and the packaging; the
/// rest is cut into packets by 2-byte big-endian lengths (what is left over is the last packet).
/// Every packet goes to a fresh muxer as video or audio: bad bytes must be counted or refused,
/// never crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    LogLevel.quiet.apply()
    let format: ContainerFormat = mode & 1 == 0 ? .asf : .flv
    let codec: VideoCodec = mode & 2 == 0 ? .h264 : .hevc
    let audioOnly = mode & 4 != 0
    var packets: [[UInt8]] = []
    var i = 1
    while i < bytes.count {
        guard i + 2 <= bytes.count else { packets.append(Array(bytes[i...])); break }
        let n = Int(bytes[i]) << 8 | Int(bytes[i + 1])
        i += 2
        let end = min(bytes.count, i + n)
        packets.append(Array(bytes[i..<end]))
        i = end
    }
    do {
        let muxer = try Muxer(format: format,
                              video: audioOnly ? nil : VideoStreamDescription(codec: codec),
                              audio: AudioStreamDescription(sampleRate: 44100, channels: 2),
                              flvHEVC: mode & 64 == 0 ? .enhanced : .codec12, onChunk: { _ in })
        for (n, p) in packets.enumerated() {
            if audioOnly || mode & 8 != 0 && n % 2 == 1 {
                try? muxer.addAudio(p, pts: Int64(n) * 1024, timescale: 44100)
            } else {
                try? muxer.addVideo(p, pts: Int64(n), timescale: 30, isKeyframe: mode & 16 != 0 || n == 0,
                                    isExtraData: mode & 32 != 0 && n == 0)
            }
        }
        try? muxer.finish()
    } catch {}
    return 0
}

@_cdecl("NormalizerFuzz_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
