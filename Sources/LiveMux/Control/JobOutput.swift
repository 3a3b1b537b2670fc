/// One output of a running job, given at the start or added live: what the control API finds by
/// its id (`o0`, `o1` …), describes, changes and removes, the same way for both.
struct JobOutput {
    let id: OutputID
    let spec: OutputSpec
    /// The mux session writing it (one of the job's, or its own when added live).
    let session: MuxSession
    let video: LiveOutputs.VideoEncode?
    let audio: LiveOutputs.AudioEncode?
    /// Added live: its session's queue, ended when the job stops (its encode may have ended first).
    let addedQueue: MuxQueue?
    var removed = false

    /// What it is shown as (a path, stdout, a masked URL): two outputs may have one.
    var label: String { spec.destination.description }
    /// What the statistics keep its figures by.
    var key: String { id.description }
}
