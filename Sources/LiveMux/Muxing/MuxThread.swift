import Foundation
import POSIX
import FFmpeg

/// The mux thread's work: take packets from the queue in DTS order, write each through every
/// container writer, and hand the labelled chunks to that writer's sinks. A sink that fails is
/// dropped (and reported); when no sink is left the queue is cancelled, which stops the producers.
final class MuxThread: @unchecked Sendable {
    // `@exclusivity(unchecked)`: fields of the per-packet path, used by one thread (or under a
    // lock) with no overlapping access; see "Exclusivity" in docs/architecture.md.
    @exclusivity(unchecked) private var routes: [MuxRoute]
    private let queue: MuxQueue
    private let statistics: Statistics
    private let report: @Sendable (String) -> Void
    /// The first failure: a muxer error, or every sink gone (`lostEveryOutput`). Producers read it
    /// once the queue refused them, while the mux thread may still be writing: so behind a lock.
    private let firstFailure = Locked<Error?>(nil)
    var failure: Error? { firstFailure.withLock { $0 } }
    /// The mux thread's own note that `firstFailure` is set, read per packet without a lock.
    @exclusivity(unchecked) private var failed = false
    /// The failure is that every sink stopped, not the muxer's own.
    private(set) var lostEveryOutput = false
    /// The output whose packets measure the recording (media time, bytes, capture → bytes): the
    /// first given that still has a sink, so the measure goes on when that one stops.
    @exclusivity(unchecked) private var measured = 0
    /// Capture → bytes out, for the output measured (see DeliveryLatency).
    @exclusivity(unchecked) private var latency: DeliveryLatency

    /// Where written packets go back to their reader (`livemux mux`); nil: they are freed here.
    private let recycle: PacketPool?
    /// Every output's key and label (HTTP viewers' hubs aside), and why each one that stopped
    /// did, by key.
    let outputs: [(key: String, label: String)]
    private(set) var stoppedOutputs: [String: String] = [:]
    /// 0; 1 for a second session's thread (URL outputs with an encode of their own): its last
    /// output stopping is said as a stop, since the first session's outputs go on.
    private let session: Int
    /// Outputs the control API removes, by key, taken between batches.
    private let removals = Locked([String]())
    /// Threads closing removed sinks (a push may take seconds to flush), joined at the end.
    @exclusivity(unchecked) private var closing: [WorkerThread] = []
    /// Whether this session's packets are the recording's in the statistics now (media time,
    /// bytes muxed, latency, late drops): the first session's, until every output of it stopped,
    /// then the next (`Statistics.measures`). Read once a batch.
    @exclusivity(unchecked) private var measuring: Bool
    /// What the output measured muxed since the statistics last heard of it (nil: nothing): they are
    /// told once a batch, not once a packet (a lock round and a hashed name each).
    @exclusivity(unchecked) private var unreportedMux: (mediaTime: Double, bytes: Int)?

    /// - Parameter outputs: the outputs in the order the user gave them.
    init(routes: [MuxRoute], queue: MuxQueue, statistics: Statistics, session: Int = 0, recycle: PacketPool? = nil,
         outputs: [(key: String, label: String)], report: @escaping @Sendable (String) -> Void) {
        self.routes = routes
        self.session = session
        measuring = statistics.measures(session)
        self.recycle = recycle
        self.outputs = outputs
        latency = DeliveryLatency(format: routes.first?.writer.format ?? .flv)
        self.queue = queue
        self.statistics = statistics
        self.report = report
    }

    func run() {
        for i in routes.indices {
            do {
                deliver(try routes[i].writer.header(), to: i)
            } catch {
                failOrDrop(i, error)
            }
        }
        var batch: [EncodedPacket] = []
        while !failed, queue.pop(into: &batch) {
            measuring = statistics.measures(session)
            for i in batch.indices where !failed { write(batch[i]) }
            endBatch()
            publishCounts()
            applyRemovals()
            if let recycle { recycle.give(&batch) }
            batch.removeAll(keepingCapacity: true)
        }
        // Finish every output that still has somewhere to go, even after a failure elsewhere:
        // what was recorded stays playable.
        for i in routes.indices where !routes[i].sinks.isEmpty {
            do {
                deliver(try routes[i].writer.trailer(), to: i)
                if i == measured && measuring { for l in latency.flushed(now: Timestamp.monotonicMicroseconds()) { statistics.recordLatency(l) } }
            } catch {
                fail(error)
            }
            for sink in routes[i].sinks {
                do {
                    try sink.close()
                    statistics.outputFinished(routes[i].key(of: sink))
                } catch {
                    dropSink(sink, of: i, error)
                }
            }
        }
        publishCounts()
        closing.forEach { $0.join() }
    }

    /// Ends the output with key `key` from the next batch on (any thread): the last sink of its
    /// writer gets the trailer first, so a file is complete; a stream's other sinks go on.
    func remove(output key: String) { removals.withLock { $0.append(key) } }

    private func applyRemovals() {
        let keys = removals.withLock { r in
            defer { r = [] }
            return r
        }
        for key in keys {
            guard let i = routes.indices.first(where: { routes[$0].sink(keyed: key) != nil }), let sink = routes[i].sink(keyed: key) else { continue }
            if routes[i].sinks.count == 1 {
                do { deliver(try routes[i].writer.trailer(), to: i) } catch { fail(error) }
            }
            if routes[i].unreported > 0 { statistics.outputWrote(key, bytes: routes[i].unreported) }
            routes[i].sinks.removeAll { $0 === sink }
            closing.append(WorkerThread.spawn("livemux-close") { [statistics] in
                do {
                    try sink.close()
                    statistics.outputFinished(key)
                } catch {
                    statistics.outputStopped(key, reason: ExplainedError.describe(error).message)
                }
            })
            retired(i)
            if !hasOutputsLeft {
                // Every output of the session was removed: a clean end, not a failure.
                statistics.sessionStopped(session)
                queue.cancel()
            }
        }
    }

    /// Output `i` lost a sink: when it was the measured one and has none left, the next still writing is measured.
    private func retired(_ i: Int) {
        if i == measured, routes[i].sinks.isEmpty, let next = routes.indices.first(where: { !routes[$0].sinks.isEmpty }) {
            // Its packets still waiting to be emitted will not be: the next output's are timed from here.
            measured = next
            latency = DeliveryLatency(format: routes[next].writer.format)
        }
    }

    /// Adds what was muxed and written since the last call to the statistics.
    private func publishCounts() {
        if let m = unreportedMux {
            statistics.muxed(mediaTime: m.mediaTime, bytes: m.bytes)
            unreportedMux = nil
        }
        for i in routes.indices where routes[i].unreported > 0 {
            for sink in routes[i].sinks { statistics.outputWrote(routes[i].key(of: sink), bytes: routes[i].unreported) }
            routes[i].unreported = 0
        }
    }

    /// Lets every sink write out what it gathered of the batch (a stream's).
    private func endBatch() {
        for i in routes.indices {
            for sink in routes[i].sinks {
                do { try sink.endOfBatch() } catch { dropSink(sink, of: i, error) }
            }
        }
    }

    /// Writes one packet through every output that still has sinks.
    private func write(_ packet: EncodedPacket) {
        for i in routes.indices where !routes[i].sinks.isEmpty {
            do {
                if let segmenter = routes[i].segmenter, segmenter.cutsBefore(packet) {
                    try cut(i, before: packet, segmenter)
                    if routes[i].sinks.isEmpty { continue }
                }
                guard let chunk = try routes[i].writer.write(packet) else {
                    if measuring { statistics.countDropped(packet.stream) }
                    continue
                }
                deliver(chunk, to: i)
                routes[i].segmenter?.wrote(packet, bytes: chunk.count)
                if i == measured && measuring {
                    let t = Double(packet.dts) * packet.timeBase.doubleValue
                    unreportedMux = (max(unreportedMux?.mediaTime ?? t, t), (unreportedMux?.bytes ?? 0) + chunk.count)
                    if packet.captureTime > 0 || latency.hasPending {
                        for l in latency.wrote(captureTime: packet.captureTime, emitted: chunk.count,
                                               now: Timestamp.monotonicMicroseconds()) {
                            statistics.recordLatency(l)
                        }
                    }
                }
            } catch {
                failOrDrop(i, error)
            }
        }
    }

    /// Ends output `i`'s segment with its trailer (which completes the file) and begins the next
    /// at `packet` with a fresh writer's header (which creates the next file).
    private func cut(_ i: Int, before packet: EncodedPacket, _ segmenter: Segmenter) throws {
        deliver(try routes[i].writer.trailer(), to: i)
        guard !routes[i].sinks.isEmpty else { return }
        routes[i].writer = try segmenter.nextWriter(at: packet)
        deliver(try routes[i].writer.header(), to: i)
    }

    private func deliver(_ chunk: Chunk, to i: Int) {
        for sink in routes[i].sinks {
            do { try sink.write(chunk) } catch { dropSink(sink, of: i, error) }
        }
        routes[i].unreported += chunk.count
    }

    private func dropSink(_ sink: ChunkSink, of i: Int, _ error: Error) {
        let key = routes[i].key(of: sink)
        if routes[i].unreported > 0 { statistics.outputWrote(key, bytes: routes[i].unreported) }
        routes[i].sinks.removeAll { $0 === sink }
        var reason = ExplainedError.describe(error).message
        // Network sinks' errors start with their (masked) name: say it once.
        if reason.hasPrefix(sink.name + ": ") { reason.removeFirst(sink.name.count + 2) }
        stoppedOutputs[key] = reason
        statistics.outputStopped(key, reason: reason)
        retired(i)
        let lastOne = !hasOutputsLeft
        if !lastOne || session > 0 { report("output \(sink.name) stopped: \(reason)") }
        if lastOne {
            statistics.sessionStopped(session)
            if !failed { lostEveryOutput = true }
            fail(error)
        }
    }

    /// Whether an output or a viewers' stream still has somewhere to go. The browsers' stream (a
    /// route without a container format) keeps nothing going: with --http it is the dashboard's
    /// picture of a recording, which ends with the recording's last output.
    private var hasOutputsLeft: Bool { routes.contains { $0.format != nil && !$0.sinks.isEmpty } }

    /// The browsers' stream (a route without a container format) is an extra beside the outputs:
    /// its muxer failing ends it alone, said once, and the recording goes on.
    private func failOrDrop(_ i: Int, _ error: Error) {
        guard routes[i].format == nil, routes.indices.contains(where: { $0 != i && !routes[$0].sinks.isEmpty }) else { return fail(error) }
        report("the browser stream (\(BrowserStream.path)) stopped: \(ExplainedError.describe(error).message)")
        for sink in routes[i].sinks { try? sink.close() }
        routes[i].sinks.removeAll()
        retired(i)
    }

    private func fail(_ error: Error) {
        if !failed {
            failed = true
            firstFailure.withLock { $0 = error }
        }
        queue.cancel()
    }
}
