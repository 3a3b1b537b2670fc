/// What the control API asks of a running job (`Pipeline`, whose methods are also its library
/// API): each call changes one thing at once, or throws a `ControlError` having changed nothing.
/// Called one at a time on the control API's own thread (`ControlWorker`), never the HTTP loop:
/// most calls are a few lock rounds; adding a source waits for its open, at most `--device-timeout`.
protocol JobControl: AnyObject, Sendable {
    /// The job as `GET /api` shows it: sources, outputs (id, target, state, settings, bytes).
    var controlDescription: JobDescription { get }
    /// `PATCH /api/sources/aN`: an audio source's volume (linear gain) and/or mute.
    func setAudio(_ source: String, volume: Double?, muted: Bool?) throws
    /// `POST /api/segments/cut`: the same as SIGUSR1.
    func cutSegments() throws
    /// `PATCH /api/outputs/ID`: an output's video bit rate, in bits per second.
    func setVideoBitRate(output: String, _ bitRate: Int) throws
    /// `POST /api/outputs`: a new output, which starts at a keyframe; its description (with its id).
    func addOutput(_ spec: OutputSpec, overwrite: Bool) throws -> JobDescription.Output
    /// `DELETE /api/outputs/ID`: the output ends whole (trailer written, push closed).
    func removeOutput(_ id: String) throws
    /// `POST /api/outputs/ID/reconnect`: a URL output connects again at once.
    func reconnectOutput(_ id: String) throws
    /// `POST /api/sources`: a source opened and added while the recording goes on; its description.
    func addSource(_ spec: SourceSpec, kind: StreamKind) throws -> JobDescription.Source
    /// `DELETE /api/sources/ID`: a source ends while the recording goes on.
    func removeSource(_ id: String) throws
    /// `PUT /api/layout`: where the video sources go, and which is the main picture (`v1`).
    func setLayout(_ layout: VideoLayout?, main: String?) throws
}
