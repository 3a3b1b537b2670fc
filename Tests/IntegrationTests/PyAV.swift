import Foundation
import XCTest

/// Reads a recording with PyAV (`.build/venv`, from `scripts/setup --test`): a current FFmpeg,
/// independent of the FFmpeg 5.1 LiveMux is built on, which reads Enhanced FLV (HEVC).
enum PyAV {
    static let python = Tools.packageRoot.appendingPathComponent(".build/venv/bin/python").path

    /// What PyAV saw in the first video stream: every packet demuxed, every frame decoded.
    struct Reading: Decodable {
        /// nil when the file has no video stream.
        let codec: String?
        let width: Int?
        let height: Int?
        let audio: String?
        let duration: Double?
        let packets: Int
        let keyframes: Int
        /// Each decoded frame's size, and a hash of its planes (row by row, without padding).
        let sizes: [String]
        let hashes: [String]
        /// Errors raised or logged at error level while demuxing and decoding.
        let errors: [String]
    }

    // No numpy: each plane's visible bytes, row by row, go into one SHA-1 per frame.
    private static let script = """
    import av, av.logging, hashlib, json, sys
    out = {"packets": 0, "keyframes": 0, "sizes": [], "hashes": [], "errors": []}
    def take(frames):
        for f in frames:
            h = hashlib.sha1()
            for p in f.planes:
                data = memoryview(p)
                for row in range(p.height):
                    h.update(data[row * p.line_size: row * p.line_size + p.width])
            out["sizes"].append("%dx%d" % (f.width, f.height))
            out["hashes"].append(h.hexdigest())
    with av.logging.Capture() as logs:
        c = av.open(sys.argv[1])
        out.update(audio=c.streams.audio[0].codec_context.name if c.streams.audio else None,
                   duration=c.duration / 1e6 if c.duration else None)
        v = c.streams.video[0] if c.streams.video else None
        if v:
            out.update(codec=v.codec_context.name, width=v.codec_context.width, height=v.codec_context.height)
        for packet in (c.demux(v) if v else []):
            if packet.size == 0:
                continue
            out["packets"] += 1
            out["keyframes"] += packet.is_keyframe
            try:
                take(packet.decode())
            except av.FFmpegError as e:
                out["errors"].append(str(e))
        if v:
            take(v.codec_context.decode(None))
    out["errors"] += ["%s: %s" % (name, text.strip()) for level, name, text in logs if level <= av.logging.ERROR]
    print(json.dumps(out))
    """

    static func read(_ path: String) throws -> Reading {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            XCTFail("no PyAV at \(python): run scripts/setup --test")
            throw NSError(domain: "PyAV", code: 1)
        }
        let r = try Tools.run(python, ["-c", script, path])
        guard r.status == 0 else {
            XCTFail("PyAV could not read \(path): \(r.stderr)")
            throw NSError(domain: "PyAV", code: Int(r.status))
        }
        return try JSONDecoder().decode(Reading.self, from: r.stdout)
    }
}
