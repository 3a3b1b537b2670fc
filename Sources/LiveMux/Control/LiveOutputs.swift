import Foundation
import FFmpeg
import POSIX

/// Every output of a running recording — those given at the start and those added and removed
/// while it runs (`POST` and `DELETE /api/outputs`) — as one list of `JobOutput`s. An output added
/// gets a mux session of its own — a queue, a mux thread, its writer and sink — fed by the
/// encodes it asks for: an existing one with the same settings (so the others never notice) or a
/// new one, added to the video or audio encoder at its next frame. It starts at the next
/// keyframe, which its encode is asked for, with timestamps from 0 (`LiveJoin`,
/// `ContainerWriter.startsAtFirstPacket`). Removed, an output added gets the end of its streams;
/// one given leaves its session's mux thread between two batches. Either way its trailer is
/// written, so a file is complete and a push closes cleanly.
final class LiveOutputs: @unchecked Sendable {
    /// One encode the outputs may share: its settings, and the lane (whose tee is thread-safe).
    struct VideoEncode { let settings: VideoSettings; let adapts: Bool; let lane: VideoLane }
    struct AudioEncode { let settings: AudioSettings; let lane: AudioLane }

    private struct State {
        var video: [VideoEncode]
        var audio: [AudioEncode]
        var outputs: [JobOutput]
        /// The index of the next session (statistics and mux threads tell sessions by it).
        var nextSession: Int
        /// Set when the job stops: no output may join any more.
        var closed = false
        /// Sessions made for an output that could not join its encode, finished with the others.
        var abandoned: [MuxSession] = []
    }
    private let state: Locked<State>

    /// What a new output's encode and session are made from.
    struct Context {
        let video: VideoSettings?
        let audio: AudioSettings?
        let videoFormat: VideoFormat?
        let audioFormat: AudioFormat?
        let videoEncoder: VideoEncoder?
        let audioEncoder: AudioEncoder?
        /// The job's outputs: their policies (reconnect, queues, TLS) apply to the new ones.
        let outputs: Outputs
        let queueCapacity: Int
        let statistics: Statistics
        let quiet: Bool
        let report: @Sendable (String) -> Void
    }
    private let context: Context

    /// Whether the job serves live viewers (then no output is its last), and the video encode
    /// they take, which no output may change alone.
    private let servesViewers: Bool
    private let viewersVideo: VideoLane?

    /// - Parameters:
    ///   - given: the outputs given at the start, o0, o1 … in that order.
    ///   - firstSession: the index the next session gets (after the job's own).
    init(_ context: Context, given: [JobOutput], video: [VideoEncode], audio: [AudioEncode], servesViewers: Bool, viewersVideo: VideoLane?,
         firstSession: Int) {
        self.context = context
        self.servesViewers = servesViewers
        self.viewersVideo = viewersVideo
        state = Locked(State(video: video, audio: audio, outputs: given, nextSession: firstSession))
    }

    var all: [JobOutput] { state.withLock { $0.outputs } }

    /// Those added while the job ran.
    var added: [JobOutput] { all.filter { $0.addedQueue != nil } }

    /// The sessions of the outputs added, to finish with the job's own.
    var addedSessions: [MuxSession] { state.withLock { $0.outputs.filter { $0.addedQueue != nil }.map(\.session) + $0.abandoned } }

    /// Output `id`, else a `ControlError` that lists the outputs.
    func output(_ id: String) throws -> JobOutput {
        let outputs = all
        guard let output = outputs.first(where: { $0.key == id }) else {
            throw ControlError.notFound("no output \(id): the outputs are \(outputs.map(\.key).joined(separator: ", "))")
        }
        return output
    }

    /// Who else takes `output`'s video encode (other outputs still writing, the live viewers).
    func sharingVideo(with output: JobOutput) -> [String] {
        guard let lane = output.video?.lane else { return [] }
        let others = all.filter { $0.id != output.id && !$0.removed && $0.video?.lane === lane }.map(\.key)
        return others + (viewersVideo === lane ? ["the live viewers"] : [])
    }

    /// No output joins from now on; every queue is ended (one whose encode had already finished
    /// when it joined would otherwise wait for ever).
    func close() {
        let queues = state.withLock { s in
            s.closed = true
            return s.outputs.compactMap(\.addedQueue)
        }
        for q in queues { StreamKind.allCases.forEach(q.end) }
    }

    /// Adds an output. Throws a `ControlError` having created nothing; one that would write over
    /// what the job writes or reads is refused (`refuseIfTaken`).
    func add(_ spec: OutputSpec, overwrite: Bool) throws -> JobOutput {
        let c = context
        let taken = { (s: State) throws in try self.refuseIfTaken(spec, in: s) }
        try state.withLock { try taken($0) }
        var outputs = c.outputs
        outputs.destinations = [spec]
        (outputs.listen, outputs.controlAccess) = (nil, nil)
        // A file is cut as the command line's are (a plain name is refused, as -o's is); its
        // segments are its own, and so not in --segment-list.
        outputs.segments = spec.destination.filePath == nil ? nil : c.outputs.segments.map(SegmentPlan.init(joining:))
        outputs.overwriteFiles = overwrite
        do { try outputs.validate() } catch { throw ControlError.badRequest("output", ExplainedError.describe(error).message) }
        if spec.destination == .standardOutput { throw ControlError.badRequest("output", "stdout is an output of the command line only") }
        if case .file(let path) = spec.destination, !overwrite, FileManager.default.fileExists(atPath: path) {
            throw ControlError.badRequest("overwrite", "\(path) exists: give \"overwrite\": true to replace it, or another name")
        }
        return try state.withLock { s in
            guard !s.closed else { throw ControlError.conflict(nil, "the job is stopping: no output can be added") }
            // Again under the lock that registers it: two requests for one file may race.
            try taken(s)
            let id = OutputID(s.outputs.count)
            outputs.destinations[0].id = id
            let video = try c.video.map { try Self.videoEncode(spec.encoding.applied(to: $0), in: s, c) }
            let audio = try c.audio.map { try Self.audioEncode(spec.encoding.applied(to: $0), in: s, c) }
            let kinds = [video.map { _ in StreamKind.video }, audio.map { _ in StreamKind.audio }].compactMap { $0 }
            let queue = MuxQueue(streams: kinds, capacity: c.queueCapacity, singleProducer: false, startAtZero: true)
            outputs.sendBufferBytes = Pipeline.sendBufferBytes(videoBitRate: video?.settings.bitRate ?? 0, audioBitRate: audio?.settings.bitRate ?? 0)
            let session: MuxSession
            do {
                let streams = try [video.map { try $0.lane.streamDescription() }, audio.map { try $0.lane.streamDescription() }].compactMap { $0 }
                session = try MuxSession(queue: queue, outputs: outputs, streams: streams, streamingASFPacketSize: MuxSession.liveASFPacketSize,
                                         statistics: c.statistics, index: s.nextSession, startsAtFirstPacket: true, report: c.report)
            } catch {
                throw ControlError.badRequest("output", ExplainedError.describe(error).message)
            }
            session.start()
            let join = LiveJoin(hasVideo: video != nil)
            let joined = [video?.lane.tee.join(queue, session: s.nextSession, at: join), audio?.lane.tee.join(queue, session: s.nextSession, at: join)]
            guard !joined.contains(false) else {
                // An encode stopped for good between the choice and the join (its last output ended).
                video?.lane.tee.leave(queue)
                audio?.lane.tee.leave(queue)
                StreamKind.allCases.forEach(queue.end)
                s.abandoned.append(session)
                throw ControlError.conflict(nil, "the encode this output would share ended just now: ask again")
            }
            // A new encode joins its encoder once its tee has the session, or it would find none and end.
            if let video, !s.video.contains(where: { $0.lane === video.lane }) {
                s.video.append(video)
                c.videoEncoder?.add(video.lane)
            }
            if let audio, !s.audio.contains(where: { $0.lane === audio.lane }) {
                s.audio.append(audio)
                c.audioEncoder?.add(audio.lane)
            }
            let output = JobOutput(id: id, spec: outputs.destinations[0], session: session, video: video, audio: audio, addedQueue: queue)
            s.outputs.append(output)
            s.nextSession += 1
            return output
        }
    }

    /// Refuses `spec` when it would write over what the job writes or reads: an output still
    /// writing, or removed and still finishing (a second writer would destroy what the first
    /// wrote), and the job's own files (inputs, key files, --stats, a segment list, its log) and
    /// every name its segment patterns make, "overwrite" or not.
    private func refuseIfTaken(_ spec: OutputSpec, in s: State) throws {
        let c = context
        let same = { (d: Destination) -> Bool in
            guard case .file(let a) = d, case .file(let b) = spec.destination else { return d == spec.destination }
            return FileIdentity(a) == FileIdentity(b)
        }
        if let other = s.outputs.first(where: { same($0.spec.destination) }) {
            guard other.removed else {
                throw ControlError.badRequest("output", "\(spec.destination.description) is already an output of this job (\(other.id)): give another")
            }
            if c.statistics.outputState(other.key)?.isGoing == true {
                throw ControlError.conflict("output", "\(other.id) is still finishing \(spec.destination.description): ask again in a moment")
            }
        }
        guard let path = spec.destination.filePath else { return }
        let claim = ClaimedFile(path, option: Self.addedLabel, segmented: c.outputs.segments != nil && SegmentName(path).isNumbered)
        if let refusal = (c.outputs.claimedFiles.map(\.renewed) + Self.segmentClaims(s.outputs, c.outputs)).refusal(of: claim) {
            throw ControlError.badRequest("output", refusal)
        }
    }

    /// How an output added live is named where a file claim refuses it.
    private static let addedLabel = "the added output"

    /// The segment patterns of the job's outputs, each a claim on every name it makes (those it
    /// wrote and those to come, so also of outputs that ended).
    private static func segmentClaims(_ outputs: [JobOutput], _ job: Outputs) -> [ClaimedFile] {
        guard job.segments != nil else { return [] }
        return outputs.compactMap { o in
            guard let path = o.spec.destination.filePath, SegmentName(path).isNumbered else { return nil }
            return ClaimedFile(path, option: o.addedQueue == nil ? "-o" : "output \(o.id)", segmented: true)
        }
    }

    /// Ends output `id` while the others go on: its mux thread writes its trailer and closes it.
    /// The last one is refused (a job with no output left would end), as is a file whose muxer
    /// other files share.
    func remove(_ id: String) throws -> OutputID {
        let known = all.map(\.key)
        let output: JobOutput = try state.withLock { s in
            guard let i = s.outputs.firstIndex(where: { $0.key == id }) else {
                throw ControlError.notFound("no output \(id): the outputs are \(known.joined(separator: ", "))")
            }
            let output = s.outputs[i]
            guard !output.removed else { throw ControlError.conflict(nil, "\(id) is already ending") }
            if s.outputs.filter({ !$0.removed }).count <= 1 && !servesViewers {
                throw ControlError.conflict(nil, "\(id) is the job's last output: add another first, or stop the job to end it")
            }
            if let problem = output.session.removalProblem(output.id) { throw ControlError.conflict(nil, "\(id) cannot end alone: \(problem)") }
            s.outputs[i].removed = true
            return output
        }
        if let queue = output.addedQueue {
            // Its encodes end its streams: the mux thread drains, writes the trailer, and an
            // encode no session takes any more retires.
            output.video?.lane.tee.leave(queue)
            output.audio?.lane.tee.leave(queue)
        } else {
            output.session.removeOutput(output.id)
        }
        return output.id
    }

    /// The video encode with `settings`, else a new one (which `add` registers once it has a session).
    private static func videoEncode(_ settings: VideoSettings, in s: State, _ c: Context) throws -> VideoEncode {
        // An encode whose bit rate was changed since it started runs at another rate than it was asked.
        if let e = s.video.first(where: { $0.settings == settings && !$0.adapts && !$0.lane.tee.isRetired
                                           && ($0.lane.target?.current ?? settings.bitRate) == settings.bitRate }) { return e }
        guard let base = c.videoFormat, c.videoEncoder != nil else { throw ControlError.conflict("output", "the job records no video") }
        var format = base
        if let w = settings.width, let h = settings.height { (format.width, format.height) = (w, h) }
        if let fps = settings.fps { format.fps = fps }
        let lane: VideoLane
        do {
            lane = try VideoLane(settings: settings, format: format, tee: PacketTee(queues: [], sessions: [], statistics: c.statistics),
                                 target: BitRateDial(settings.bitRate), statistics: c.statistics, quiet: c.quiet)
        } catch {
            throw ControlError.badRequest(nil, "cannot open an encode at these settings: \(ExplainedError.describe(error).message)")
        }
        return VideoEncode(settings: settings, adapts: false, lane: lane)
    }

    private static func audioEncode(_ settings: AudioSettings, in s: State, _ c: Context) throws -> AudioEncode {
        if let e = s.audio.first(where: { $0.settings == settings && !$0.lane.tee.isRetired }) { return e }
        guard let format = c.audioFormat, c.audioEncoder != nil else { throw ControlError.conflict("output", "the job records no audio") }
        let lane: AudioLane
        do {
            lane = try AudioLane(settings: settings, format: format, tee: PacketTee(queues: [], sessions: [], statistics: c.statistics),
                                 statistics: c.statistics)
        } catch {
            throw ControlError.badRequest("abitrate", "cannot open an audio encode at these settings: \(ExplainedError.describe(error).message)")
        }
        return AudioEncode(settings: settings, lane: lane)
    }
}
