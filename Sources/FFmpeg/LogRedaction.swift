import CFFmpeg
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps secrets out of FFmpeg's own log. libavformat's protocols print the URLs they open
/// (`[srt @ …] Connection to srt://host?passphrase=… failed`), so once a secret is registered
/// every log line goes through a callback that replaces it with `****` before it reaches stderr.
public enum FFmpegLogRedaction {
    private struct State {
        var secrets: [String] = []
        var installed = false
    }
    // Locking: the Mutex guards everything the callback and `redact` share.
    private static let state = Mutex(State())

    /// Registers strings that must never be printed (stream keys, passwords). Short strings (under
    /// 3 characters) are ignored: replacing them would garble the log without hiding anything.
    public static func redact(_ secrets: [String]) {
        let useful = secrets.filter { $0.count >= 3 }
        guard !useful.isEmpty else { return }
        let install = state.withLock { s -> Bool in
            s.secrets.append(contentsOf: useful)
            s.secrets.sort { $0.count > $1.count }  // longest first, so a secret inside another goes whole
            defer { s.installed = true }
            return !s.installed
        }
        if install { lm_log_redirect(callback) }
    }

    /// Replaces every registered secret in `text`.
    public static func apply(_ text: String) -> String {
        let secrets = state.withLock { $0.secrets }
        var t = text
        for s in secrets where t.contains(s) { t = t.replacing(s, with: "****") }
        return t
    }

    /// Called by the C callback in shim.h with one formatted line.
    private static let callback: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { _, line in
        guard let line else { return }
        var text = apply(String(cString: line))
        text.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
    }
}
