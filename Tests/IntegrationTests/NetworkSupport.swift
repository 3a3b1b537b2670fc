import Foundation
import XCTest

/// A real nginx with the RTMP module (`libnginx-mod-rtmp`, installed by `scripts/setup --test`),
/// run in the foreground from a temporary directory on a free loopback port, recording every
/// publish (`record all`). `application` adds directives to its `live` application (a relay's
/// `push`); `name` tells apart several servers in one directory. Started and stopped by the test.
final class RTMPServer {
    let port: Int
    let directory: String
    let recordings: String
    private(set) var process: ChildProcess?

    static let module = "/usr/lib/nginx/modules/ngx_rtmp_module.so"
    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") && FileManager.default.fileExists(atPath: module)
    }

    init(directory: String, name: String = "nginx", application: String = "") throws {
        port = try Network.freePort()
        self.directory = directory + "/" + name
        recordings = self.directory + "/rec"
        try FileManager.default.createDirectory(atPath: recordings, withIntermediateDirectories: true)
        let config = """
        load_module \(Self.module);
        daemon off;
        master_process off;
        pid \(self.directory)/nginx.pid;
        error_log \(self.directory)/error.log info;
        events { worker_connections 64; }
        rtmp {
          server {
            listen 127.0.0.1:\(port);
            application live {
              live on;
              record all;
              record_path \(recordings);
              record_unique on;
              \(application)
            }
          }
        }
        """
        try config.write(toFile: self.directory + "/nginx.conf", atomically: true, encoding: .utf8)
    }

    func start() throws {
        process = try ChildProcess("/usr/sbin/nginx", ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/error.log"])
        // Ready when it accepts connections.
        if !waitUntil(deadline: 5, condition: { Network.canConnect(port: port) }) {
            XCTFail("nginx did not listen on \(port): \(log)")
        }
    }

    /// Its error log (at `info`: every publish and play, with the stream's name).
    var log: String { (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? "" }

    /// SIGKILL: the server dies as in a crash, its connections reset.
    func kill() {
        process?.end(signal: SIGKILL)
        process = nil
    }

    /// SIGQUIT: graceful, so recordings are finished (SIGKILL after 5 s).
    func stop() {
        process?.end(signal: SIGQUIT, grace: 5)
        process = nil
    }

    /// The finished recordings, oldest first.
    func recordedFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: recordings).filter { $0.hasSuffix(".flv") }.sorted()
            .map { recordings + "/" + $0 }
    }

    deinit { stop() }
}

enum Network {
    /// A loopback port nothing listens on now (bound to 0, read back, released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_addr.s_addr = inet_addr("127.0.0.1")
        sin.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw NSError(domain: "freePort", code: Int(errno)) }
        return Int(UInt16(bigEndian: sin.sin_port))
    }

    /// A connected TCP socket to 127.0.0.1:port, or -1.
    static func connect(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_addr.s_addr = inet_addr("127.0.0.1")
        sin.sin_port = UInt16(port).bigEndian
        let ok = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if !ok { close(fd); return -1 }
        return fd
    }

    /// Lets this process hold thousands of sockets (the soft limit up to the hard one).
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// `GET path` (HTTP/1.1, with extra header lines) and the whole reply.
    static func get(port: Int, _ path: String, method: String = "GET", headers: String = "") -> String {
        exchange(port: port, Array("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n".utf8))
    }

    static func canConnect(port: Int) -> Bool {
        let fd = connect(port: port)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// Whether a TCP socket listens on `port`, as the kernel lists it (/proc/net/tcp): asked
    /// without connecting, which would use up a listener that takes one connection (ffmpeg's
    /// `listen=1`).
    static func isListening(tcp port: Int) -> Bool {
        sockets("tcp").contains { $0.port == port && $0.state == "0A" }  // 0A: TCP_LISTEN
    }

    /// Whether a UDP socket is bound to `port` (/proc/net/udp): an SRT listener, which answers no
    /// connect, is ready once it is.
    static func isBound(udp port: Int) -> Bool {
        sockets("udp").contains { $0.port == port }
    }

    /// The local port and state of every IPv4 and IPv6 socket in /proc/net/`table` and `table`6.
    private static func sockets(_ table: String) -> [(port: Int, state: String)] {
        ["/proc/net/\(table)", "/proc/net/\(table)6"].flatMap { file -> [(port: Int, state: String)] in
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            // "sl local_address rem_address st …": the address is hex "ADDRESS:PORT".
            return text.split(separator: "\n").dropFirst().compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count > 3, let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }) else { return nil }
                return (port, String(fields[3]))
            }
        }
    }

    /// Sends `request` and reads until the server closes (or `timeout` seconds pass); the reply's text.
    static func exchange(port: Int, _ request: [UInt8], timeout: Int = 5) -> String {
        let fd = connect(port: port)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while reply.count < 65536 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            reply += buffer[..<n]
        }
        return String(decoding: reply, as: UTF8.self)
    }
}

/// livemux serving viewers (`serve`, or `mux --listen`), its stderr in a log: waits for the viewer
/// URLs it prints once at start.
final class ServingLivemux {
    private let process: ChildProcess

    init(_ arguments: [String], directory: String, environment: [String: String] = [:]) throws {
        process = try ChildProcess(Tools.livemux, arguments, environment: environment, stderr: .file("\(directory)/serving-\(UUID().uuidString).log"))
    }

    /// The URLs of the "serving viewers at URL and URL" line, once it is printed (nil after 10 s).
    func viewerURLs() -> [String]? { printed("serving viewers at ")?.components(separatedBy: " and ") }

    /// The page of the "dashboard at URL" line, once it is printed (nil after 10 s).
    func dashboardURL() -> String? { printed("dashboard at ") }

    /// The rest of the first stderr line that starts with `prefix`, once it is printed (nil after 10 s).
    func printed(_ prefix: String) -> String? {
        var rest: String?
        waitUntil(deadline: 10) {
            rest = stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
            return rest != nil
        }
        return rest
    }

    var pid: pid_t { process.pid }

    var stderr: String { process.stderrFile }

    /// The file its stderr goes to: the job's log.
    var logPath: String { process.stderrPath! }

    /// Asks it to stop gracefully (SIGTERM).
    func stop() { process.signal(SIGTERM) }

    /// Waits for the end; the exit status.
    func wait() -> Int32 { process.wait()! }

    deinit {
        process.signal(SIGTERM)
        process.wait()
    }
}
