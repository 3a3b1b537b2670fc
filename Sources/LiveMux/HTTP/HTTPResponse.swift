/// The bytes of the server's answers: short ones with a body (errors, the index), the head of a
/// stream, and CORS preflights. Browser players (flv.js, mpegts.js) read streams and the index
/// from pages of other origins, hence `Access-Control-Allow-Origin: *`.
enum HTTPResponse {
    static let allowOrigin = "Access-Control-Allow-Origin: *\r\n"
    static let methods = "GET, HEAD, OPTIONS"
    /// Request headers a preflight allows when it names none, or names them oddly.
    static let usualRequestHeaders = "Range, Accept"
    /// How long a browser may keep a preflight's answer: a day (browsers cap it lower).
    static let preflightMaxAgeSeconds = 86400

    /// The answer to a browser's CORS preflight (`OPTIONS`): any origin may read, with the request
    /// headers it asks for when they are plain field names (they are echoed), for a day.
    static func preflight(requestedHeaders: String) -> [UInt8] {
        let plain = !requestedHeaders.isEmpty
            && requestedHeaders.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_, ".contains($0)) }
        let text = "HTTP/1.1 204 No Content\r\n\(allowOrigin)Access-Control-Allow-Methods: \(methods)\r\n"
            + "Access-Control-Allow-Headers: \(plain ? requestedHeaders : usualRequestHeaders)\r\n"
            + "Access-Control-Max-Age: \(preflightMaxAgeSeconds)\r\nConnection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// A complete answer; a HEAD request gets the same head without the body.
    static func text(_ status: String, body: String, contentType: String = "text/plain", extra: String = "", head: Bool = false) -> [UInt8] {
        bytes(status, body: Array(body.utf8), contentType: contentType, extra: extra, head: head)
    }

    /// A complete answer with a body of any bytes (a JPEG).
    static func bytes(_ status: String, body: [UInt8], contentType: String, extra: String = "", head: Bool = false) -> [UInt8] {
        let text = "HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
            + "\(extra)Connection: close\r\n\r\n"
        return Array(text.utf8) + (head ? [] : body)
    }

    /// What the dashboard's answers add: they change every second, and other origins may read them.
    static let live = "Cache-Control: no-cache\r\n\(allowOrigin)"

    /// The head of `/events` (server-sent events): the body goes on until either side closes.
    static let eventStreamHead = Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\(live)Connection: close\r\n\r\n".utf8)

    /// The head of a stream: HTTP/1.1 clients get chunked transfer coding, so the end of the stream
    /// is a clean end for them; HTTP/1.0 ones read until the connection closes.
    static func streamHead(contentType: String, chunked: Bool) -> [UInt8] {
        let framing = chunked ? "Transfer-Encoding: chunked\r\n" : ""
        return Array("HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nCache-Control: no-cache\r\n\(allowOrigin)\(framing)Connection: close\r\n\r\n".utf8)
    }
}
