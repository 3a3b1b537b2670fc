import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a client asked for, from the request head. Pure parsing, unit-tested.
struct HTTPRequest: Equatable {
    var method: String
    var path: String
    /// `HTTP/1.1` clients get the stream chunked, so its end is a clean end, not a dropped connection.
    var isHTTP11 = false

    /// Parses the request line of a head (`GET /live.flv HTTP/1.1`); nil when it is malformed.
    static func parse(_ head: [UInt8]) -> HTTPRequest? {
        guard let end = head.firstIndex(of: UInt8(ascii: "\r")) ?? head.firstIndex(of: UInt8(ascii: "\n")),
              let line = String(bytes: head[..<end], encoding: .ascii) else { return nil }
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), !parts[0].isEmpty,
              parts[0].allSatisfy({ $0.isUppercase }), parts[1].hasPrefix("/") else { return nil }
        var path = parts[1]
        if let q = path.firstIndex(of: "?") { path = path[..<q] }
        return HTTPRequest(method: String(parts[0]), path: String(path), isHTTP11: parts[2] == "HTTP/1.1")
    }
}
