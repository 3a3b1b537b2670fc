import CFFmpeg
import Synchronization

/// libsrt's own log, which it writes to stderr itself unless told otherwise: routed into av_log
/// (shim.h), so it follows `-v`, secret masking and an app's handler like FFmpeg's lines, and its
/// rejections of a passphrase are counted (FFmpeg 5.1 reports them as a bare EIO).
enum SRTLog {
    private static let routed = Atomic<Bool>(false)

    /// Routes libsrt's log (once, from the first srt:// connection on).
    static func route() {
        guard !routed.exchange(true, ordering: .relaxed) else { return }
        FFmpegLog.installCallback()
        _ = lm_srt_route_log()
    }

    /// How many times so far libsrt reported a connection refused for its passphrase.
    static var passphraseRejections: Int { lm_srt_passphrase_rejections() }
}
