/// One request of the control API as a typed value, what `ControlAPI.command` reads from a
/// method, path and body (checked whole) and `ControlAPI.perform` carries out on the job, as
/// obs-websocket's requests are typed. Ids stay as given: the job knows which exist.
enum ControlCommand: Sendable, Equatable {
    /// `GET /api`.
    case describe
    /// `PATCH /api/sources/aN`: volume (linear gain) and/or mute.
    case setAudio(source: String, volume: Double?, muted: Bool?)
    /// `POST /api/sources`.
    case addSource(SourceSpec, kind: StreamKind)
    /// `DELETE /api/sources/ID`.
    case removeSource(String)
    /// `POST /api/segments/cut`.
    case cutSegments
    /// `POST /api/outputs`.
    case addOutput(OutputSpec, overwrite: Bool)
    /// `PATCH /api/outputs/ID`: the video bit rate, bits per second.
    case setVideoBitRate(output: String, Int)
    /// `DELETE /api/outputs/ID`.
    case removeOutput(String)
    /// `POST /api/outputs/ID/reconnect`.
    case reconnectOutput(String)
    /// `PUT /api/layout`.
    case setLayout(VideoLayout?, main: String?)
}
