import Foundation
import XCTest

/// nginx terminating HTTPS on a free loopback port and passing requests to `serve` on
/// `backendPort`, with docs/security.md's proxy settings: the deployment that serves viewers on
/// HTTPS pages.
final class HTTPSProxy {
    let port: Int
    private var process: ChildProcess?

    init(directory: String, certificate: String, key: String, backendPort: Int) throws {
        port = try Network.freePort()
        let base = directory + "/https-proxy"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let config = """
        daemon off;
        master_process off;
        pid \(base)/nginx.pid;
        error_log \(base)/error.log info;
        events { worker_connections 64; }
        http {
          access_log off;
          client_body_temp_path \(base); proxy_temp_path \(base); fastcgi_temp_path \(base);
          uwsgi_temp_path \(base); scgi_temp_path \(base);
          server {
            listen 127.0.0.1:\(port) ssl;
            server_name localhost;
            ssl_certificate \(certificate);
            ssl_certificate_key \(key);
            location / {
              proxy_pass http://127.0.0.1:\(backendPort);
              proxy_http_version 1.1;
              proxy_buffering off;
              proxy_read_timeout 1h;
            }
          }
        }
        """
        try config.write(toFile: base + "/nginx.conf", atomically: true, encoding: .utf8)
        process = try ChildProcess("/usr/sbin/nginx", ["-p", base, "-c", base + "/nginx.conf", "-e", base + "/error.log"])
        guard waitUntil(deadline: 5, condition: { Network.canConnect(port: port) }) else {
            throw SetupError("nginx (HTTPS) did not listen on \(port): \((try? String(contentsOfFile: base + "/error.log", encoding: .utf8)) ?? "")")
        }
    }

    deinit { process?.end(signal: SIGQUIT, grace: 3) }
}
