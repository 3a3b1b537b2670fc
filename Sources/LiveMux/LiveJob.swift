/// What `record`, `serve` and `mux` run, and what an app drives: `Pipeline` (capture → encoders →
/// outputs) and `FileMuxJob` (files read → outputs). Building one does everything that can fail on
/// bad input; then `start`, `stop` (graceful: what was read is muxed and every trailer written;
/// from any thread, any number of times) and `wait` (returns when every thread is done; throws the
/// first failure, or every output's fate when some stopped while others went on).
public protocol LiveJob: AnyObject, Sendable {
    func start()
    func stop()
    func wait() throws
    /// Counters for a progress line or `--stats`, from any thread.
    var statisticsSnapshot: StatisticsSnapshot { get }
    /// With live viewers: the URLs they open (with the port bound, if 0 was asked for).
    var viewerURLs: [String] { get }
    /// With live viewers: what a browser plays (`/live.mp4`, HLS at `/live.m3u8`), when the codecs allow.
    var browserURLs: [String] { get }
    /// With an HTTP server (`--listen`, `--http`): the dashboard's page.
    var dashboardURL: String? { get }
}
