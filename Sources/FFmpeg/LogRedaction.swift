import POSIX

/// Keeps secrets out of FFmpeg's own log. libavformat's protocols print the URLs they open
/// (`[srt @ …] Connection to srt://host?passphrase=… failed`), so once a secret is registered
/// every log line goes through `FFmpegLog`'s callback, which replaces it with `****` first.
public enum FFmpegLogRedaction {
    // The secrets the callback and `redact` share live in their `Locked`.
    private static let registered = Locked<[String]>([])

    /// Registers strings that must never be printed (stream keys, passwords). Short strings (under
    /// 3 characters) are ignored: replacing them would garble the log without hiding anything.
    public static func redact(_ secrets: [String]) {
        let useful = secrets.filter { $0.count >= 3 }
        guard !useful.isEmpty else { return }
        registered.withLock { s in
            s.append(contentsOf: useful)
            s.sort { $0.count > $1.count }  // longest first, so a secret inside another goes whole
        }
        FFmpegLog.installCallback()
    }

    /// Replaces every registered secret in `text`.
    public static func apply(_ text: String) -> String {
        let secrets = registered.withLock { $0 }
        var t = text
        for s in secrets where t.contains(s) { t = t.replacing(s, with: "****") }
        return t
    }
}
