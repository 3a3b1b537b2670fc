import Foundation
import POSIX

/// The control API under `/api`: JSON in, JSON out, behind `ControlAccess` (its own key: a
/// viewer key never grants control). A request is checked whole — path, method, every field —
/// before the job is asked, so a bad one changes nothing. Runs on `ControlWorker`'s thread, one
/// request at a time, so a change that waits (a device's open) holds up no viewer.
final class ControlAPI: Sendable {
    let access: ControlAccess
    private struct JobReference { weak var job: (any JobControl)? }
    /// Weak: the job holds the server that holds this.
    private let job = Locked(JobReference())

    /// The largest body taken (a JSON object of a few fields).
    static let maxBodyBytes = 64 << 10
    /// Linear gain a source may be given: +24 dB.
    static let maxVolume = 16.0
    /// What a volume refused is told (ctl takes decibels too, which it turns into a gain).
    static let volumeRange = "volume is a linear gain from 0 to 16, that is at most +24 dB: 1 is as captured, 0.5 is -6 dB"

    init(access: ControlAccess) { self.access = access }

    func attach(_ job: any JobControl) { self.job.withLock { $0.job = job } }

    static func isAPI(_ path: String) -> Bool { path == "/api" || path.hasPrefix("/api/") }

    /// The whole answer to a request for an `/api` path.
    func answer(method: String, path: String, authorization: String, body: [UInt8]) -> [UInt8] {
        switch access.check(authorization: authorization) {
        case .allowed: break
        case .missing:
            return Self.json("401 Unauthorized", ["error": "this API needs the header Authorization: Bearer KEY (the key of --control-key-file)"],
                             extra: "WWW-Authenticate: Bearer realm=\"livemux\"\r\n")
        case .wrong: return Self.json("403 Forbidden", ["error": "the control key is wrong"])
        }
        guard let job = job.withLock({ $0.job }) else {
            return Self.json("503 Service Unavailable", ["error": "the job is not running"])
        }
        do {
            let (status, answer) = try route(method: method, path: path, body: body, job: job)
            return Self.json(status, answer)
        } catch let error as ControlError {
            var extra = ""
            if let allowed = error.allowed { extra = "Allow: \(allowed)\r\n" }
            return Self.json(error.status, error.jsonObject, extra: extra)
        } catch {
            return Self.json("500 Internal Server Error", ["error": "\(error)"])
        }
    }

    private func route(method: String, path: String, body: [UInt8], job: any JobControl) throws -> (String, any Encodable) {
        try Self.perform(try Self.command(method: method, path: path, body: body), on: job)
    }

    /// The request as a typed command, checked whole (path, method, every field) before the job
    /// is asked: a `ControlError` naming what is wrong otherwise.
    static func command(method: String, path: String, body: [UInt8]) throws -> ControlCommand {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)  // after "/api"
        switch (parts.count, parts.first) {
        case (0, _):
            try allow(method, "GET")
            return .describe
        case (2, "sources"):
            try allow(method, "PATCH, DELETE")
            if method == "DELETE" {
                _ = try object(body, allowed: [], example: "no body")
                return .removeSource(parts[1])
            }
            let fields = try object(body, allowed: ["volume", "mute"], example: "{\"mute\": true} or {\"volume\": 0.5}")
            let volume = try fields["volume"].map { try Self.volume($0) }
            let muted = try fields["mute"].map { value -> Bool in
                guard let b = value as? Bool, isBoolean(value) else { throw ControlError.badRequest("mute", "mute is true or false") }
                return b
            }
            return .setAudio(source: parts[1], volume: volume, muted: muted)
        case (1, "sources"):
            try allow(method, "POST")
            let fields = try object(body, allowed: ["video", "audio", "options"], example: "{\"video\": \"v4l2:/dev/video1\"} or {\"audio\": \"pulse:default\"}")
            let (spec, kind) = try source(fields)
            return .addSource(spec, kind: kind)
        case (2, "segments") where parts[1] == "cut":
            try allow(method, "POST")
            _ = try object(body, allowed: [], example: "no body")
            return .cutSegments
        case (2, "outputs"):
            try allow(method, "PATCH, DELETE")
            if method == "DELETE" {
                _ = try object(body, allowed: [], example: "no body")
                return .removeOutput(parts[1])
            }
            let fields = try object(body, allowed: ["vbitrate"], example: "{\"vbitrate\": \"800k\"}")
            guard let value = fields["vbitrate"] else { throw ControlError.badRequest(nil, "give the field to change: {\"vbitrate\": \"800k\"}") }
            return .setVideoBitRate(output: parts[1], try bitRate(value))
        case (3, "outputs") where parts[2] == "reconnect":
            try allow(method, "POST")
            _ = try object(body, allowed: [], example: "no body")
            return .reconnectOutput(parts[1])
        case (1, "outputs"):
            try allow(method, "POST")
            let fields = try object(body, allowed: ["output", "format", "overwrite", "size", "fps", "vbitrate", "vcodec", "abitrate"],
                                    example: "{\"output\": \"rtmp://host/live/KEY\", \"vbitrate\": \"800k\"}")
            let (spec, overwrite) = try output(fields)
            return .addOutput(spec, overwrite: overwrite)
        case (1, "layout"):
            try allow(method, "PUT, PATCH")
            let fields = try object(body, allowed: ["layout", "main"], example: "{\"main\": \"v1\"}")
            let shape = try fields["layout"].map { value -> VideoLayout in
                guard let name = value as? String, let l = VideoLayout(rawValue: name) else {
                    throw ControlError.badRequest("layout", "layout is one of \(VideoLayout.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return l
            }
            let main = try fields["main"].map { value -> String in
                guard let id = value as? String else { throw ControlError.badRequest("main", "main is a video source's id: \"v1\"") }
                return id
            }
            return .setLayout(shape, main: main)
        default:
            throw ControlError.notFound("no such API path: \(path) (GET /api lists the job)")
        }
    }

    /// Carries `command` out on `job`: the answer's status and body.
    static func perform(_ command: ControlCommand, on job: any JobControl) throws -> (String, any Encodable) {
        switch command {
        case .describe:
            return ("200 OK", job.controlDescription)
        case .setAudio(let id, let volume, let muted):
            try job.setAudio(id, volume: volume, muted: muted)
            return ("200 OK", source(id, in: job.controlDescription))
        case .addSource(let spec, let kind):
            return ("201 Created", try job.addSource(spec, kind: kind))
        case .removeSource(let id):
            try job.removeSource(id)
            return ("200 OK", source(id, in: job.controlDescription))
        case .cutSegments:
            try job.cutSegments()
            return ("202 Accepted", ["cut": "at the next keyframe of every file output cut into segments"])
        case .addOutput(let spec, let overwrite):
            return ("201 Created", try job.addOutput(spec, overwrite: overwrite))
        case .setVideoBitRate(let id, let rate):
            try job.setVideoBitRate(output: id, rate)
            return ("200 OK", output(id, in: job.controlDescription))
        case .removeOutput(let id):
            try job.removeOutput(id)
            return ("200 OK", output(id, in: job.controlDescription))
        case .reconnectOutput(let id):
            try job.reconnectOutput(id)
            return ("202 Accepted", output(id, in: job.controlDescription))
        case .setLayout(let shape, let main):
            try job.setLayout(shape, main: main)
            return ("200 OK", ["layout": job.controlDescription.layout])
        }
    }

    private static func allow(_ method: String, _ allowed: String) throws {
        guard allowed.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == method }) else {
            throw ControlError(status: "405 Method Not Allowed", field: nil, message: "\(method) is not taken here: \(allowed)", allowed: allowed)
        }
    }

    /// The body as a JSON object whose every field is `allowed` (an empty body is an empty object).
    private static func object(_ body: [UInt8], allowed: Set<String>, example: String) throws -> [String: Any] {
        if body.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) { return [:] }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw ControlError.badRequest(nil, "the body is not a JSON object: send \(example)")
        }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            let known = allowed.isEmpty ? "no fields" : allowed.sorted().joined(separator: ", ")
            throw ControlError.badRequest(unknown, "unknown field \"\(unknown)\": this request takes \(known)")
        }
        return object
    }

    /// JSONSerialization gives true and false as NSNumbers of type char: 1 is no boolean, nor true a number.
    private static func isBoolean(_ value: Any) -> Bool {
        guard let n = value as? NSNumber else { return false }
        return String(cString: n.objCType) == "c"
    }

    private static func volume(_ value: Any) throws -> Double {
        guard !isBoolean(value), let v = (value as? NSNumber)?.doubleValue, v.isFinite, (0...maxVolume).contains(v) else {
            throw ControlError.badRequest("volume", volumeRange)
        }
        return v
    }

    /// A number of bits per second, or a string such as "800k" or "2.5M".
    private static func bitRate(_ value: Any) throws -> Int {
        var rate: Double?
        if let n = value as? NSNumber, !isBoolean(value) {
            rate = n.doubleValue
        } else if let s = value as? String {
            let scale: Double = s.hasSuffix("k") || s.hasSuffix("K") ? 1_000 : s.hasSuffix("M") ? 1_000_000 : 1
            rate = Double(scale == 1 ? Substring(s) : s.dropLast()).map { $0 * scale }
        }
        // Compared as a Double first: Int(_:) traps on a value past Int's range (-1e308).
        guard let rate, rate >= Double(BitRates.range.lowerBound), rate <= Double(BitRates.range.upperBound) else {
            throw ControlError.badRequest("vbitrate", "vbitrate is bits per second from \(BitRates.described): 800000 or \"800k\"")
        }
        return Int(rate)
    }

    /// A new output from `POST /api/outputs`' fields, as `-o` and the options after it would make it.
    private static func output(_ fields: [String: Any]) throws -> (OutputSpec, overwrite: Bool) {
        guard let target = fields["output"] as? String, !target.isEmpty else {
            throw ControlError.badRequest("output", "give the output as -o takes it: \"output\": \"rec.flv\" or \"rtmp://host/live/KEY\"")
        }
        let destination = Destination.parse(target)
        var format: ContainerFormat
        if let given = fields["format"] {
            guard let name = given as? String, let f = ContainerFormat(rawValue: name) else {
                throw ControlError.badRequest("format", "format is \"flv\" or \"asf\"")
            }
            format = f
        } else if case .file(let path) = destination {
            let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
            guard let f = ext == "wmv" ? .asf : ContainerFormat(rawValue: ext) else {
                throw ControlError.badRequest("format", "\(path) names no container (.flv, .asf): give \"format\": \"flv\" or \"asf\"")
            }
            format = f
        } else {
            format = .flv
        }
        if case .network(let url) = destination, url.lowercased().hasPrefix("rtmp"), format != .flv {
            throw ControlError.badRequest("format", "RTMP carries FLV only: drop \"format\" or give \"flv\"")
        }
        var e = OutputEncoding()
        if let v = fields["vbitrate"] { e.videoBitRate = try bitRate(v) }
        if let v = fields["abitrate"] {
            do { e.audioBitRate = try bitRate(v) } catch { throw ControlError.badRequest("abitrate", "abitrate is bits per second: 128000 or \"128k\"") }
        }
        if let v = fields["vcodec"] {
            guard let name = v as? String, let codec = VideoCodec(rawValue: name) else { throw ControlError.badRequest("vcodec", "vcodec is \"h264\" or \"hevc\"") }
            e.videoCodec = codec
        }
        if let v = fields["size"] {
            let parts = (v as? String)?.lowercased().split(separator: "x").compactMap { Int($0) } ?? []
            guard parts.count == 2, parts.allSatisfy({ (16...8192).contains($0) && $0 % 2 == 0 }) else {
                throw ControlError.badRequest("size", "size is an even WIDTHxHEIGHT from 16x16 to 8192x8192, such as \"1280x720\"")
            }
            (e.width, e.height) = (parts[0], parts[1])
        }
        if let v = fields["fps"] {
            let text = (v as? String) ?? ((v as? NSNumber).flatMap { isBoolean(v) ? nil : $0.intValue }.map(String.init) ?? "")
            let fraction = text.split(separator: "/").compactMap { Int($0) }
            let rate = fraction.count == 2 ? FrameRate(fraction[0], fraction[1]) : fraction.count == 1 && !text.contains("/") ? FrameRate(fraction[0]) : nil
            guard let rate, rate.isSupported else { throw ControlError.badRequest("fps", "fps is whole frames per second (30) or a fraction (\"30000/1001\"), 1 to 240") }
            e.fps = rate
        }
        var overwrite = false
        if let v = fields["overwrite"] {
            guard isBoolean(v), let b = v as? Bool else { throw ControlError.badRequest("overwrite", "overwrite is true or false") }
            overwrite = b
        }
        return (OutputSpec(destination: destination, format: format, encoding: e), overwrite)
    }

    /// A new source from `POST /api/sources`' fields, as `--video` or `--audio` and their
    /// `--video-opt` / `--audio-opt` would give it.
    private static func source(_ fields: [String: Any]) throws -> (SourceSpec, StreamKind) {
        let example = "give one source: {\"video\": \"v4l2:/dev/video1\"} or {\"audio\": \"pulse:default\"}"
        let given = ["video", "audio"].filter { fields[$0] != nil }
        guard given.count == 1, let field = given.first else { throw ControlError.badRequest(given.last, example) }
        guard let text = fields[field] as? String, !text.isEmpty, text.utf8.count <= maxSourceLength else {
            throw ControlError.badRequest(field, "\(field) is a source as --\(field) takes it: \"lavfi:testsrc2\", \"pulse:default\", a file")
        }
        var spec = Capabilities.sourceSpec(text)
        if let options = fields["options"] {
            guard let object = options as? [String: Any], object.count <= maxSourceOptions else {
                throw ControlError.badRequest("options", "options is an object of the source's options: {\"video_size\": \"1280x720\"}")
            }
            for (key, value) in object {
                let text = (value as? String) ?? ((value as? NSNumber).flatMap { isBoolean(value) ? nil : $0.stringValue })
                guard let text, !key.isEmpty else {
                    throw ControlError.badRequest("options", "options' values are strings or numbers: {\"framerate\": 30}")
                }
                spec.options[key] = text
            }
        }
        return (spec, field == "video" ? .video : .audio)
    }

    /// The longest source spec and the most options taken: a device, a graph, a path.
    static let maxSourceLength = 4096, maxSourceOptions = 32

    /// Source `id` as the job's description has it (the call before found it).
    private static func source(_ id: String, in description: JobDescription) -> any Encodable {
        SourceID(id).flatMap(description.source) ?? ["id": id]
    }

    /// Output `id` as the job's description has it (the call before found it).
    private static func output(_ id: String, in description: JobDescription) -> any Encodable {
        OutputID(id).flatMap(description.output) ?? ["id": id]
    }

    static func json(_ status: String, _ answer: any Encodable, extra: String = "") -> [UInt8] {
        HTTPResponse.bytes(status, body: Array(encoded(answer)) + [10], contentType: "application/json", extra: "Cache-Control: no-store\r\n" + extra)
    }

    /// An answer's body: its JSON, keys sorted, slashes as they are (`rtmp://`).
    static func encoded(_ answer: any Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(answer)) ?? Data("{}".utf8)
    }
}
