import Foundation
import XCTest

/// stunnel (Debian's stunnel4, installed by `scripts/setup --test`) terminating TLS on a free
/// loopback port with the given certificate and passing the plain bytes to `backendPort`: an
/// RTMPS front for nginx-rtmp, as RTMPS ingest servers are commonly built.
final class TLSProxy {
    let port: Int
    private var process: ChildProcess?

    static let program = "/usr/bin/stunnel4"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: program) }

    init(directory: String, name: String, certificate: String, key: String, backendPort: Int) throws {
        port = try Network.freePort()
        let config = """
        foreground = yes
        pid =
        [front]
        accept = 127.0.0.1:\(port)
        connect = 127.0.0.1:\(backendPort)
        cert = \(certificate)
        key = \(key)
        """
        let file = "\(directory)/\(name).conf"
        try config.write(toFile: file, atomically: true, encoding: .utf8)
        process = try ChildProcess.background(Self.program, [file], directory: directory, name: name)
        guard waitUntil(deadline: 5, condition: { Network.canConnect(port: port) }) else {
            throw SetupError("stunnel did not listen on \(port): \(process?.stderrFile ?? "")")
        }
    }

    deinit { process?.end() }
}
