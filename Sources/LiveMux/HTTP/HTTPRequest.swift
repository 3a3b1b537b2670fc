import Foundation

/// What a client asked for, from the request head. Pure parsing, unit-tested.
struct HTTPRequest: Equatable {
    var method: String
    var path: String
    /// `HTTP/1.1` clients get the stream chunked, so its end is a clean end, not a dropped connection.
    var isHTTP11 = false
    /// What follows `?` in the target, without the `?` (empty when none).
    var query = ""
    /// The `Accept` header's value (empty when none).
    var accept = ""
    /// The `Access-Control-Request-Headers` of a CORS preflight (empty when none).
    var requestedHeaders = ""
    /// The `Authorization` header's value (empty when none): the control API's key.
    var authorization = ""

    /// Whether the client asked for the index as JSON (`?format=json`, or `Accept: application/json`).
    var wantsJSON: Bool {
        query.split(separator: "&").contains("format=json") || accept.lowercased().contains("application/json")
    }

    /// Whether a browser asked for a page (`Accept: text/html`), and not for JSON.
    var wantsHTML: Bool { !wantsJSON && accept.lowercased().contains("text/html") }

    /// The value of `name=` in the query (the first), nil when absent.
    func queryValue(_ name: String) -> String? {
        query.split(separator: "&").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
    }

    /// Parses the request line of a head (`GET /live.flv HTTP/1.1`) and the headers above; nil
    /// when the request line is malformed.
    static func parse(_ head: [UInt8]) -> HTTPRequest? {
        guard let end = head.firstIndex(of: UInt8(ascii: "\r")) ?? head.firstIndex(of: UInt8(ascii: "\n")),
              let line = String(bytes: head[..<end], encoding: .ascii) else { return nil }
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), !parts[0].isEmpty,
              parts[0].allSatisfy({ $0.isUppercase }), parts[1].hasPrefix("/") else { return nil }
        var path = parts[1]
        var query = Substring("")
        if let q = path.firstIndex(of: "?") {
            query = path[path.index(after: q)...]
            path = path[..<q]
        }
        return HTTPRequest(method: String(parts[0]), path: String(path), isHTTP11: parts[2] == "HTTP/1.1",
                           query: String(query), accept: header("accept", in: head[end...]) ?? "",
                           requestedHeaders: header("access-control-request-headers", in: head[end...]) ?? "",
                           authorization: header("authorization", in: head[end...]) ?? "")
    }

    /// The body's length from a head's `Content-Length` (0 without one); nil when it is not a
    /// number, so a body is never guessed at.
    static func contentLength(_ head: ArraySlice<UInt8>) -> Int? {
        guard let value = header("content-length", in: head) else { return 0 }
        guard !value.isEmpty, value.count <= 10, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber) else { return nil }
        return Int(value)
    }

    /// The value of the first header field called `name` (lower case), trimmed.
    private static func header(_ name: String, in fields: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: fields, as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) {  // "\r\n" is one Character
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
