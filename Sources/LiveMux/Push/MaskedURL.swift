// Both functions cut the URL at its separators by Unicode scalar, as FFmpeg cuts it by byte, not by
// Swift Character: a combining mark after `/` or `?` (`rtmp://h/app/\u{301}KEY`) forms one
// Character with it, which hid the separator and let the stream key through (found by scripts/fuzz url).
private typealias Scalars = ArraySlice<Unicode.Scalar>

private func text(_ s: Scalars) -> String {
    var view = String.UnicodeScalarView()
    view.append(contentsOf: s)
    return String(view)
}

/// The URL cut into scheme (before `://`), authority, path (from the first `/`), query (after the
/// first `?`) and, for http(s) alone, fragment (after the first `#`): other schemes' parsers (FFmpeg's
/// SRT and RTMP) keep a `#` inside the value it is in, so there it stays part of what is masked.
private func urlParts(_ url: String) -> (scheme: String, authority: Scalars, path: Scalars, query: Scalars?, fragment: Scalars?)? {
    let s = Array(url.unicodeScalars)[...]
    guard let schemeEnd = s.firstRange(of: Array("://".unicodeScalars)) else { return nil }
    let scheme = text(s[..<schemeEnd.lowerBound]).lowercased()
    var rest = s[schemeEnd.upperBound...]
    var fragment: Scalars? = nil
    if scheme == "http" || scheme == "https", let hash = rest.firstIndex(of: "#") {
        fragment = rest[(hash + 1)...]
        rest = rest[..<hash]
    }
    var query: Scalars? = nil
    if let q = rest.firstIndex(of: "?") {
        query = rest[(q + 1)...]
        rest = rest[..<q]
    }
    let slash = rest.firstIndex(of: "/") ?? rest.endIndex
    return (scheme, rest[..<slash], rest[slash...], query, fragment)
}

/// The `name=value` items of a fragment, such as the dashboard's `#control=KEY`: a fragment
/// is for the page alone, never the server, so every value in it is taken for a secret.
private func fragmentItems(_ fragment: Scalars) -> [(name: Scalars, value: Scalars?)] {
    fragment.split(separator: "&", omittingEmptySubsequences: false).map { item in
        guard let eq = item.firstIndex(of: "=") else { return (item, nil) }
        return (item[..<eq], item[(eq + 1)...])
    }
}

private let secretQueryNames: Set<String> = ["passphrase", "password", "pass", "pwd", "key", "streamid", "streamkey",
                                             "stream_key", "token", "secret", "auth", "sig", "signature", "pbkeylen_secret"]

/// A URL fit for a log line: the password of its user info, an RTMP stream key (everything after
/// the application in the path) and secret query values (`passphrase`, `streamid`, `key`, …) are
/// replaced by `****`, as is every value of an http(s) URL's fragment (the dashboard's
/// `#control=KEY`). Text that is not a URL is returned as it is.
public func maskedURL(_ url: String) -> String {
    guard let (scheme, authority, path, query, fragment) = urlParts(url) else { return url }
    var out = text(Array(url.unicodeScalars)[..<(authority.startIndex)])  // scheme://
    // user:password@host — the password goes; so does a lone user name, which some servers use as a token.
    if let at = authority.lastIndex(of: "@") {
        out += "****@" + text(authority[(at + 1)...])
    } else {
        out += text(authority)
    }
    if scheme.hasPrefix("rtmp") {
        // rtmp://host/app/key: the first component is the application, the rest is the stream key.
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        // components[0] is "" (before the leading slash), [1] the app, [2...] the key.
        if components.count > 2, components[2...].contains(where: { !$0.isEmpty }) {
            out += "/" + text(components[1]) + "/****"
        } else {
            out += text(path)
        }
    } else {
        out += text(path)
    }
    if let query {
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let eq = part.firstIndex(of: "=") else { return text(part) }
            let name = text(part[..<eq]).lowercased()
            // For RTMP every query value may carry the key (rtmp://host/app?key=…); mask them all.
            return secretQueryNames.contains(name) || scheme.hasPrefix("rtmp") ? text(part[..<eq]) + "=****" : text(part)
        }
        out += "?" + parts.joined(separator: "&")
    }
    if let fragment {
        out += "#" + fragmentItems(fragment).map { $0.value == nil ? text($0.name) : text($0.name) + "=****" }.joined(separator: "&")
    }
    return out
}

/// The secrets `maskedURL` hides, as they appear in the URL (user info, the RTMP stream key and
/// its parts, secret query values), for scrubbing text that quotes the URL itself (FFmpeg's log).
func secretParts(of url: String) -> [String] {
    guard let (scheme, authority, path, query, fragment) = urlParts(url) else { return [] }
    var parts: [String] = fragment.map { fragmentItems($0).compactMap { $0.value.map(text) } } ?? []
    for item in query?.split(separator: "&") ?? [] {
        guard let eq = item.firstIndex(of: "=") else { continue }
        if secretQueryNames.contains(text(item[..<eq]).lowercased()) || scheme.hasPrefix("rtmp") {
            parts.append(text(item[(eq + 1)...]))
        }
    }
    if let at = authority.lastIndex(of: "@") {
        let info = authority[..<at]
        parts.append(text(info))
        if let colon = info.firstIndex(of: ":") { parts.append(text(info[(colon + 1)...])) }
    }
    if scheme.hasPrefix("rtmp") {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        if components.count > 2 {
            parts.append(components[2...].map(text).joined(separator: "/"))
            parts.append(contentsOf: components[2...].map(text))
        }
    }
    return parts.filter { !$0.isEmpty }
}

/// Why an RTMP URL cannot be published to, if it cannot: RTMP needs an application and a stream
/// key in the path (`rtmp://HOST[:PORT]/APP/KEY`); without them libavformat connects and fails
/// with a bare I/O error. A URL with a query is left to the server (`?slist=KEY` names the key).
public func rtmpURLProblem(_ url: String) -> String? {
    guard let (scheme, _, path, query, _) = urlParts(url), scheme.hasPrefix("rtmp"), query == nil else { return nil }
    // As in maskedURL: components[0] is "" (before the leading slash), [1] the app, [2...] the key.
    let components = path.split(separator: "/", omittingEmptySubsequences: false)
    if components.count > 2, !components[1].isEmpty, components[2...].contains(where: { !$0.isEmpty }) { return nil }
    return "\(maskedURL(url)) needs an application and a stream key: \(scheme)://HOST[:PORT]/APP/KEY"
}
