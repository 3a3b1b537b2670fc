import CFFmpeg
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// FFmpeg's own log (`av_log`): to stderr by default; once a handler is set or a secret registered
/// (`FFmpegLogRedaction`), every line goes through one callback that masks secrets and hands the
/// line to the handler, else to stderr.
public enum FFmpegLog {
    public enum Level: Int32, Sendable {
        case quiet = -8, error = 16, warning = 24, info = 32, verbose = 40, debug = 48
    }

    /// Takes one line, without its newline.
    public typealias Handler = @Sendable (String) -> Void
    // The handler and whether the callback is installed live in their `Locked`.
    private static let state = Locked<(handler: Handler?, installed: Bool)>((nil, false))
    /// The error lines each watching thread has logged so far (`watchingErrors`), by thread.
    private static let watched = Locked<[pthread_t: [String]]>([:])

    public static func setLevel(_ level: Level) { av_log_set_level(level.rawValue) }

    /// Sends every line at or above the level to `handler` (masked), or back to stderr with nil.
    public static func setHandler(_ handler: Handler?) {
        state.withLock { $0.handler = handler }
        installCallback()
    }

    /// Routes FFmpeg's lines through `callback` from now on (once).
    static func installCallback() {
        let install = state.withLock { s -> Bool in
            defer { s.installed = true }
            return !s.installed
        }
        if install { lm_log_redirect(callback) }
    }

    /// Runs `body` and returns what it returned with the error lines FFmpeg logged on this thread
    /// meanwhile (masked, without newlines), at every log level: a protocol says why it failed
    /// (a TLS certificate it refused) only there, while its return code is a bare EIO.
    static func watchingErrors<T>(_ body: () throws -> T) rethrows -> (T, [String]) {
        installCallback()
        let me = pthread_self()
        watched.withLock { $0[me] = [] }
        defer { watched.withLock { $0[me] = nil } }
        let result = try body()
        return (result, watched.withLock { $0[me] ?? [] })
    }

    /// Called by the C callback in shim.h with one formatted line.
    private static let callback: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, line in
        guard let line else { return }
        var text = FFmpegLogRedaction.apply(String(cString: line))
        if level <= Level.error.rawValue {
            let me = pthread_self()
            watched.withLock { w in w[me]?.append(text.hasSuffix("\n") ? String(text.dropLast()) : text) }
        }
        // shim.h passes error lines at every level, for the watch above.
        guard level <= av_log_get_level() else { return }
        if let handler = state.withLock({ $0.handler }) {
            return handler(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        }
        // A log line that stderr cannot take has nowhere else to go: it is dropped.
        text.withUTF8 { buf in _ = try? syscall(where: "write") { write(2, buf.baseAddress, buf.count) } }
    }
}
