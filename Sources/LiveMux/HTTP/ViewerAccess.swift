import Foundation
import FFmpeg

/// Who may watch when `serve` has a viewer key: a request carries the key (`?key=KEY`), or a
/// signed link with an expiry (`?expires=T&sig=HEX`, HEX = HMAC-SHA256(key, path + T) in hex, T in
/// Unix seconds), as nginx's secure_link does. Both are compared in constant time. Every request
/// goes through `allows` before the server routes it, so every endpoint is behind it.
public struct ViewerAccess: Sendable {
    private let key: [UInt8]

    /// Keys shorter than this are refused: they can be guessed.
    public static let minimumKeyLength = 8

    /// nil when the key is too short.
    public init?(key: String) {
        guard key.utf8.count >= Self.minimumKeyLength else { return nil }
        self.key = Array(key.utf8)
    }

    /// Whether a request for `path` with this query (without `?`) may be answered at `now`.
    func allows(path: String, query: String, now: Date = Date()) -> Bool {
        let items = Self.items(query)
        if let sig = items["sig"] {
            guard let expires = items["expires"], let t = Int64(expires),
                  Double(t) >= now.timeIntervalSince1970,
                  let expected = try? signature(path: path, expires: expires) else { return false }
            // A signature over `*` opens every path: what a page hands its own requests.
            guard let anyPath = try? signature(path: Self.everyPath, expires: expires) else { return false }
            let given = Array(sig.lowercased().utf8)
            let forPath = Self.equalInConstantTime(given, Array(expected.utf8))
            let forEveryPath = Self.equalInConstantTime(given, Array(anyPath.utf8))
            return forPath || forEveryPath
        }
        if let given = items["key"] { return Self.equalInConstantTime(Array(given.utf8), key) }
        return false
    }

    /// What a signature over every path is made over, in place of one path.
    static let everyPath = "*"

    /// What the dashboard page, answered to a request with `query`, adds to its own requests
    /// (`/stats`, `/events`, `/snapshot.jpg`, `/live.mp4`, HLS): the key as given, or for a signed
    /// link a signature over `*` with the same expiry, so the link's holder gets no longer access
    /// than the link gives. Empty when the query carries neither.
    func pageQuery(for query: String) -> String {
        let items = Self.items(query)
        if items["sig"] != nil, let expires = items["expires"], let sig = try? signature(path: Self.everyPath, expires: expires) {
            return "expires=\(expires)&sig=\(sig)"
        }
        if items["key"] != nil { return keyQuery }
        return ""
    }

    /// A query's names and their values, percent-decoded. A name given twice is ambiguous: the
    /// first one counts, as in most servers.
    private static func items(_ query: String) -> [String: String] {
        var items: [String: String] = [:]
        for item in query.split(separator: "&") {
            let (name, value) = item.firstIndex(of: "=").map { (item[..<$0], item[item.index(after: $0)...]) } ?? (item, "")
            if items[String(name)] == nil { items[String(name)] = String(value).removingPercentEncoding ?? "" }
        }
        return items
    }

    /// The hex HMAC-SHA256 of `path` followed by `expires`, under the key.
    func signature(path: String, expires: String) throws -> String {
        try HMACSHA256.digest(key: key, message: Array((path + expires).utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The query that lets a viewer in: `key=KEY`, percent-encoded.
    var keyQuery: String {
        let text = String(decoding: key, as: UTF8.self)
        return "key=" + (text.addingPercentEncoding(withAllowedCharacters: Self.queryValueCharacters) ?? text)
    }

    private static let queryValueCharacters = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))

    /// Equal bytes, taking the same time wherever they differ (only the length shows).
    static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}
