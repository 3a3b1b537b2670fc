import Foundation
import XCTest

/// Runs programs (`ChildProcess`) and reads LiveMux's output back with independent tools (ffprobe,
/// ffmpeg, ffplay).
enum Tools {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The livemux binary `swift build` made (LIVEMUX_BIN overrides).
    static var livemux: String {
        if let bin = ProcessInfo.processInfo.environment["LIVEMUX_BIN"] { return bin }
        return packageRoot.appendingPathComponent(".build/debug/livemux").path
    }

    struct Result {
        let status: Int32
        let stdout: Data
        let stderr: String
        let seconds: Double
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs a program to its end (interrupting it after `timeout` seconds, a failure) and collects
    /// its output; its stdin is the file `stdinFrom`, else empty. `whileRunning` is called once it
    /// started (to signal it, or change what it records meanwhile).
    @discardableResult
    static func run(_ program: String, _ arguments: [String], stdoutTo file: String? = nil, stdinFrom input: String? = nil,
                    environment: [String: String] = [:], timeout: Double = 120,
                    whileRunning: ((ChildProcess) -> Void)? = nil) throws -> Result {
        let started = Date()
        let child = try ChildProcess(program, arguments, environment: environment, stdin: input,
                                     stdout: file.map { .file($0) } ?? .pipe, stderr: .pipe)
        // Read both pipes on other threads so a full pipe never blocks the child.
        let out = PipeReader(child.stdout)
        let err = PipeReader(child.stderr)
        whileRunning?(child)
        if child.wait(timeout: timeout) == nil {
            child.end(signal: SIGINT, grace: 0.5)
            XCTFail("\(program) \(arguments.joined(separator: " ")) ran longer than \(timeout) s")
        }
        let status = child.wait()!
        return Result(status: status, stdout: out.finish(), stderr: String(decoding: err.finish(), as: UTF8.self),
                      seconds: Date().timeIntervalSince(started))
    }

    static func livemux(_ arguments: [String], stdoutTo file: String? = nil, stdinFrom input: String? = nil, timeout: Double = 120,
                        whileRunning: ((ChildProcess) -> Void)? = nil) throws -> Result {
        try run(livemux, arguments, stdoutTo: file, stdinFrom: input, timeout: timeout, whileRunning: whileRunning)
    }

    /// HMAC-SHA256 of `message` under `key`, in hex, by openssl: independent of livemux's own
    /// (libavutil's) HMAC. The message goes through a file in `scratch`.
    static func hmacSHA256(_ message: String, key: String, scratch: String) throws -> String {
        let file = "\(scratch)/message-\(UUID().uuidString)"
        try message.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try run("openssl", ["dgst", "-sha256", "-hmac", key, "-r", file])
        XCTAssertEqual(r.status, 0, r.stderr)
        return String(r.stdoutText.prefix(64))
    }

    /// ffprobe's JSON for a file: format, streams, and (with `packets`) every packet.
    static func probe(_ path: String, packets: Bool = false, extra: [String] = []) throws -> Probe {
        var args = ["-v", "error", "-of", "json", "-show_format", "-show_streams", "-count_packets"]
        if packets { args += ["-show_packets"] }
        let r = try run("ffprobe", args + extra + [path])
        XCTAssertEqual(r.status, 0, "ffprobe failed on \(path): \(r.stderr)")
        return try JSONDecoder().decode(Probe.self, from: r.stdout)
    }

    /// What `ffmpeg -v error -i FILE -f null -` prints: empty when the file decodes cleanly.
    static func decodeErrors(_ path: String, inputOptions: [String] = []) throws -> String {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error"] + inputOptions + ["-i", path, "-f", "null", "-"])
        return r.stderr + (r.status == 0 ? "" : "exit \(r.status)")
    }

    /// How much slower than normal the binary runs (sanitizer builds are several times slower).
    static var slowdown: Double { ProcessInfo.processInfo.environment["LIVEMUX_SANITIZED"] == nil ? 1 : 3 }

    static func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("livemux-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }
}

/// Drains a pipe on its own thread.
final class PipeReader: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)
    private let hasHandle: Bool

    init(_ handle: FileHandle?) {
        hasHandle = handle != nil
        guard let handle else { return }
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func finish() -> Data {
        if hasHandle { done.wait() }
        return data
    }
}

struct Probe: Decodable {
    struct Stream: Decodable {
        let index: Int
        let codec_name: String?
        let codec_type: String
        let codec_tag_string: String?
        let profile: String?
        let width: Int?
        let height: Int?
        let r_frame_rate: String?
        let sample_rate: String?
        let channels: Int?
        let extradata_size: Int?
        let nb_read_packets: String?
        /// What the container's header says (FLV: onMetaData's videodatarate and audiodatarate).
        let bit_rate: String?
        var packetCount: Int { Int(nb_read_packets ?? "0") ?? 0 }
    }
    struct Format: Decodable {
        let format_name: String
        let duration: String?
        let size: String?
        var seconds: Double? { duration.flatMap(Double.init) }
    }
    struct Packet: Decodable {
        let stream_index: Int
        let dts: Int64?
        let pts: Int64?
        let dts_time: String?
        let pts_time: String?
        let flags: String
        let size: String
    }
    let streams: [Stream]
    let format: Format
    let packets: [Packet]?

    func stream(_ type: String) -> Stream? { streams.first { $0.codec_type == type } }
}

/// How often `waitUntil` asks its condition again.
let waitPollInterval = 0.05

/// Asks `condition` until it holds or `deadline` seconds (scaled by `Tools.slowdown` under a
/// sanitizer) have passed, every `interval` seconds; whether it held. In place of a sleep and then
/// an assertion: a test waits only as long as the program takes, and a slow machine gets the
/// whole deadline.
@discardableResult
func waitUntil(deadline seconds: Double, every interval: Double = waitPollInterval, condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds * Tools.slowdown)
    while Date() < deadline {
        if try condition() { return true }
        usleep(UInt32(interval * 1_000_000))
    }
    return try condition()
}
