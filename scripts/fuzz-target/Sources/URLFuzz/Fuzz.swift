import FuzzDriver
@testable import LiveMux

/// A secret the structured half of the fuzzer hides in URLs; masking must never let it through.
let marker = "Z9SECRETZ9"

/// libFuzzer's entry point. The bytes, as text, go through every URL parser a `-o` or `--listen`
/// value meets (none may crash). Then the text is cut at NUL bytes into fields that fill a URL of
/// a known shape, with the marker as its password, RTMP stream key and secret query value: the
/// masked URL must not contain the marker, and `secretParts` (what FFmpeg's log is scrubbed of)
/// must name it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    _ = maskedURL(text)
    _ = secretParts(of: text)
    _ = Destination.parse(text).description
    _ = ListenAddress.parse(text)

    guard let first = bytes.first else { return 0 }
    var fields = String(decoding: bytes.dropFirst(), as: UTF8.self)
        .split(separator: "\0", omittingEmptySubsequences: false).map { field -> String in
            // Separators would change the URL's shape; the marker itself must appear only where placed.
            // Filtered by scalar: `?` plus a combining mark is one Character, not `?`, but still a separator.
            var view = String.UnicodeScalarView()
            view.append(contentsOf: field.unicodeScalars.filter { !"/?#@&=:\0".unicodeScalars.contains($0) })
            var f = String(view)
            while f.contains(marker) { f = f.replacingOccurrences(of: marker, with: "") }
            return f
        }
    while fields.count < 4 { fields.append("") }
    let host = fields[0].isEmpty ? "h" : fields[0]
    let schemes = ["rtmp", "RTMP", "rtmps", "rtmpt", "srt", "tcp", "udp", "rist"]
    let scheme = schemes[Int(first) % schemes.count]
    let user = first & 8 != 0 ? "\(fields[1]):\(marker)@" : ""
    let url: String
    if scheme.lowercased().hasPrefix("rtmp") {
        let query = first & 16 != 0 ? "?\(fields[3])=\(marker)" : ""
        url = "\(scheme)://\(user)\(host)/\(fields[2].isEmpty ? "live" : fields[2])/\(fields[3])\(marker)\(query)"
    } else {
        let names = ["passphrase", "streamid", "key", "token", "password"]
        url = "\(scheme)://\(user)\(host):9000?\(fields[2])=1&\(names[Int(first >> 5) % names.count])=\(marker)"
    }
    let masked = maskedURL(url)
    precondition(!masked.contains(marker), "maskedURL leaks the secret of \(url.debugDescription): \(masked.debugDescription)")
    precondition(!Destination.parse(url).description.contains(marker), "Destination.description leaks \(url.debugDescription)")
    precondition(secretParts(of: url).contains { $0.contains(marker) }, "secretParts misses the secret of \(url.debugDescription)")
    return 0
}

@_cdecl("URLFuzz_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
