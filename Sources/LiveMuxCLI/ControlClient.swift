import Foundation
import LiveMux
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// `livemux ctl`'s side of the control API: one blocking HTTP/1.1 request to the job's server
/// (plain HTTP, as the server speaks it, normally on loopback), read until the server closes.
struct ControlClient {
    let host: String
    let port: String
    /// The path of the server's root (`/` of `http://host:port/`), without the trailing slash.
    let base: String
    let key: String

    /// How long to wait for the server to connect and take the request.
    static let timeoutSeconds = 5
    /// How long to wait for its answer: a source added may take `--device-timeout` (30 s by
    /// default) to open before the job gives it up.
    static let answerTimeoutSeconds = 40
    /// The most of an answer read: the job's description is a few KiB.
    static let maxAnswerBytes = 4 << 20

    /// `url`: the dashboard URL livemux printed (`http://127.0.0.1:8080/`); its query is ignored.
    init(url: String, key: String) throws {
        guard let parts = URLComponents(string: url), parts.scheme == "http", let host = parts.host, !host.isEmpty else {
            throw UsageError("--url takes the job's http:// address, such as http://127.0.0.1:8080/ (what livemux printed as the dashboard), not '\(url)'")
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        port = String(parts.port ?? 80)
        base = parts.path.hasSuffix("/") ? String(parts.path.dropLast()) : parts.path
        self.key = key
    }

    /// Sends `method path` with a JSON body; the status code and the body of the answer.
    func send(_ method: String, _ path: String, json: [String: Any]? = nil) throws -> (status: Int, body: Data) {
        let body = try json.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        var request = "\(method) \(base)\(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAuthorization: Bearer \(key)\r\n"
        if json != nil { request += "Content-Type: application/json\r\n" }
        request += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let fd = try connect()
        defer { try? closeDescriptor(fd) }
        let bytes = Array(request.utf8) + Array(body)
        var sent = 0
        while sent < bytes.count {
            sent += try bytes.withUnsafeBytes { b in try syscall(where: "send") { Glibc.send(fd, b.baseAddress! + sent, b.count - sent, Int32(MSG_NOSIGNAL)) } }
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while answer.count < Self.maxAnswerBytes {
            let n = try buffer.withUnsafeMutableBytes { b in try syscall(where: "recv") { recv(fd, b.baseAddress, b.count, 0) } }
            if n == 0 { break }
            answer += buffer[..<n]
        }
        return try Self.parse(answer)
    }

    /// A connected socket, with send and receive timeouts.
    private func connect() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, port, &hints, &found)
        guard status == 0, let first = found else {
            throw LiveMuxError.output("cannot find \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError: Error = LiveMuxError.output("no address for \(host)")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let a = candidate {
            candidate = a.pointee.ai_next
            do {
                let fd = try syscall(where: "socket") { socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol) }
                for (option, seconds) in [(SO_RCVTIMEO, Self.answerTimeoutSeconds), (SO_SNDTIMEO, Self.timeoutSeconds)] {
                    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
                    _ = try? syscall(where: "setsockopt") { setsockopt(fd, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size)) }
                }
                do {
                    _ = try syscall(where: "connect") { Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) }
                    return fd
                } catch {
                    try? closeDescriptor(fd)
                    throw error
                }
            } catch {
                lastError = error
            }
        }
        throw LiveMuxError.output("cannot reach http://\(host):\(port)/: \(ExplainedError.describe(lastError).message) (is livemux running there with --control-key-file?)")
    }

    /// The status code and body of a whole answer (`Content-Length` framed, as the server sends).
    static func parse(_ answer: [UInt8]) throws -> (status: Int, body: Data) {
        let text = String(decoding: answer.prefix(1024), as: UTF8.self)
        let fields = text.split(separator: " ", maxSplits: 2)
        let blankLine: [UInt8] = [13, 10, 13, 10]
        let end = answer.count < 4 ? nil : (0...(answer.count - 4)).first { answer[$0..<($0 + 4)].elementsEqual(blankLine) }.map { $0 + 4 }
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), let status = Int(fields[1]), let end else {
            throw LiveMuxError.output("the server's answer is not HTTP (is this the address livemux printed?)")
        }
        return (status, Data(answer[end...]))
    }
}
