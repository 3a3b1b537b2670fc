/// A URL fit for a log line: the password of its user info, an RTMP stream key (everything after
/// the application in the path) and secret query values (`passphrase`, `streamid`, `key`, …) are
/// replaced by `****`. Text that is not a URL is returned as it is.
public func maskedURL(_ url: String) -> String {
    guard let schemeEnd = url.range(of: "://") else { return url }
    let scheme = url[..<schemeEnd.lowerBound].lowercased()
    var rest = Substring(url[schemeEnd.upperBound...])
    var query: Substring? = nil
    if let q = rest.firstIndex(of: "?") {
        query = rest[rest.index(after: q)...]
        rest = rest[..<q]
    }
    var authority = rest
    var path: Substring = ""
    if let slash = rest.firstIndex(of: "/") {
        authority = rest[..<slash]
        path = rest[slash...]
    }
    var out = String(url[..<schemeEnd.upperBound])
    // user:password@host — the password goes; so does a lone user name, which some servers use as a token.
    if let at = authority.lastIndex(of: "@") {
        out += "****@" + authority[authority.index(after: at)...]
    } else {
        out += authority
    }
    if scheme.hasPrefix("rtmp") {
        // rtmp://host/app/key: the first component is the application, the rest is the stream key.
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        // components[0] is "" (before the leading slash), [1] the app, [2...] the key.
        if components.count > 2, components[2...].contains(where: { !$0.isEmpty }) {
            out += "/" + components[1] + "/****"
        } else {
            out += path
        }
    } else {
        out += path
    }
    if let query {
        let secret: Set<String> = ["passphrase", "password", "pass", "pwd", "key", "streamid", "streamkey",
                                   "stream_key", "token", "secret", "auth", "sig", "signature", "pbkeylen_secret"]
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let eq = part.firstIndex(of: "=") else { return String(part) }
            let name = part[..<eq].lowercased()
            // For RTMP every query value may carry the key (rtmp://host/app?key=…); mask them all.
            return secret.contains(name) || scheme.hasPrefix("rtmp") ? part[..<eq] + "=****" : String(part)
        }
        out += "?" + parts.joined(separator: "&")
    }
    return out
}

/// The secrets `maskedURL` hides, as they appear in the URL (user info, the RTMP stream key and
/// its parts, secret query values), for scrubbing text that quotes the URL itself (FFmpeg's log).
public func secretParts(of url: String) -> [String] {
    guard let schemeEnd = url.range(of: "://") else { return [] }
    let scheme = url[..<schemeEnd.lowerBound].lowercased()
    var rest = Substring(url[schemeEnd.upperBound...])
    var parts: [String] = []
    if let q = rest.firstIndex(of: "?") {
        for item in rest[rest.index(after: q)...].split(separator: "&") {
            guard let eq = item.firstIndex(of: "=") else { continue }
            let value = String(item[item.index(after: eq)...])
            if maskedURL("x://h?" + item).hasSuffix("=****") || scheme.hasPrefix("rtmp") { parts.append(value) }
        }
        rest = rest[..<q]
    }
    let slash = rest.firstIndex(of: "/") ?? rest.endIndex
    let authority = rest[..<slash]
    if let at = authority.lastIndex(of: "@") {
        let info = authority[..<at]
        parts.append(String(info))
        if let colon = info.firstIndex(of: ":") { parts.append(String(info[info.index(after: colon)...])) }
    }
    if scheme.hasPrefix("rtmp") {
        let components = rest[slash...].split(separator: "/", omittingEmptySubsequences: false)
        if components.count > 2 {
            parts.append(components[2...].joined(separator: "/"))
            parts.append(contentsOf: components[2...].map(String.init))
        }
    }
    return parts.filter { !$0.isEmpty }
}
