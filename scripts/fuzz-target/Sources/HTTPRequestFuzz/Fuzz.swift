import Foundation
#if canImport(Glibc)
import Glibc
#endif
import FuzzDriver
@testable import LiveMux

/// One server for the whole run, its event loop running, bound to an ephemeral loopback port the
/// fuzzer never uses: it hands the server connections itself (`adopt`). Its stream has no header
/// yet, so a good request for it gets its 200 head and waits for one; the fuzzer's close ends it.
nonisolated(unsafe) let server: HTTPServer = {
    LogLevel.quiet.apply()
    let hub = StreamHub(name: "/live.flv", contentType: "video/x-flv", queueLimit: 64, countDropped: { _ in })
    let server = try! HTTPServer(address: ListenAddress(host: "127.0.0.1", port: 0), routes: ["/live.flv": hub])
    server.start()
    return server
}()

let viewerKey = "fuzz-viewer-key"
let viewerAccess = ViewerAccess(key: viewerKey)!

/// libFuzzer's entry point: the bytes are what a client sends before it half-closes. They go
/// through the request-line parser and the viewer-key check, then through the server's connection path (head reading with
/// its size and time bounds, parsing, routing, the answer) on one end of a socket pair. Whatever
/// the bytes, the server must answer within its request timeout — a crash or a hang is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let request = HTTPRequest.parse(bytes) {
        // What parse promises: an upper-case method and an absolute path without its query.
        precondition(!request.method.isEmpty && request.path.hasPrefix("/") && !request.path.contains("?"))
        // The viewer-key check on the same query: it must never let in a request that carries
        // neither the key nor a signature (which the fuzzer cannot forge).
        if viewerAccess.allows(path: request.path, query: request.query) {
            precondition(request.query.contains(viewerKey) || request.query.contains("%") || request.query.contains("sig="), "let in without the key")
        }
    }
    var fds: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { fatalError("socketpair") }
    var sent = 0
    while sent < bytes.count {
        let n = bytes.withUnsafeBytes { send(fds[1], $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { break }
        sent += n
    }
    shutdown(fds[1], Int32(SHUT_WR))
    server.adopt(fds[0])  // the server closes it
    var timeout = timeval(tv_sec: 8, tv_usec: 0)  // under libFuzzer's 10 s hang limit
    setsockopt(fds[1], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    // The answer must be an HTTP status line (or nothing, when the stream closed at once).
    // The answer comes from the loop's thread: recv may wait, and libFuzzer's SIGALRM interrupt it.
    var answer = [UInt8](repeating: 0, count: 16)
    var n = -1
    let deadline = Date().addingTimeInterval(8)
    repeat {
        n = answer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, Int32(MSG_WAITALL)) }
    } while n < 0 && errno == EINTR && Date() < deadline
    precondition(n >= 0, "no answer within 8 s")
    precondition(n == 0 || n >= 12 && answer.starts(with: Array("HTTP/1.1 ".utf8)), "no status line")
    close(fds[1])
    return 0
}

@_cdecl("HTTPRequestFuzz_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
