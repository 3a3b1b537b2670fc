import FFmpeg

/// A failure told in one line for people (the problem and the fix, no FFmpeg codes), with the
/// error it explains kept for `-v`, which shows the function and code that failed.
public struct ExplainedError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public let cause: any Error

    init(_ description: String, cause: any Error) {
        self.description = description
        self.cause = cause
    }

    /// Any error as the line a person reads, and the raw FFmpeg call and code behind it (for
    /// `-v`; nil when there is none). An FFmpeg error nothing explained keeps only its text.
    public static func describe(_ error: any Error) -> (message: String, detail: String?) {
        let cause = (error as? ExplainedError)?.cause ?? error
        let detail = cause is FFmpegError ? "FFmpeg: \(cause)" : nil
        if let raw = error as? FFmpegError {
            return ("FFmpeg: \(raw.message) (run again with -v for the call that failed and FFmpeg's own log)", detail)
        }
        return (String(describing: error), detail)
    }
}
