import Foundation

/// One of `AdaptiveBitrateTests`' squeezes: livemux pushing 640x360 30 fps test pattern and 128k
/// AAC through a shaped link to an nginx-rtmp of its own, in a directory of its own, on a thread
/// of its own. A push takes about an eighth of a core and most of its time is the link's
/// schedule, so each squeeze starts its partner too and two run side by side, which halves the
/// class's wall time. Only the waiting test reads the results and asserts.
final class SqueezeRun: @unchecked Sendable {
    struct Spec {
        let seconds: Int
        let vbitrate: String
        /// The proxy (scripts/…), its schedule (START:BITS_PER_SECOND,…) and its options.
        let script: String
        let schedule: String
        let proxyOptions: [String]
        /// More livemux arguments, before the push's -o; "DIR" stands for the run's directory.
        let extra: [String]
        /// The squeeze that runs beside this one, and the test that reads it (nil: it runs alone).
        let partner: (name: String, test: String)?
    }

    static let specs: [String: Spec] = [
        "throttle": Spec(seconds: 32, vbitrate: "2M", script: "throttle-proxy", schedule: "0:10000000,4:1000000,22:10000000",
                         proxyOptions: [], extra: ["-o", "DIR/rec.flv"], partner: ("delay", "testBitRateSettlesOnALinkWithDelay")),
        "delay": Spec(seconds: 32, vbitrate: "2M", script: "bucket-proxy", schedule: "0:10000000,4:1000000,22:10000000",
                      proxyOptions: ["--burst", "1500", "--rcvbuf", "8192", "--rtt", "100"], extra: [],
                      partner: ("throttle", "testBitRateFollowsASqueezedLinkAndComesBack")),
        "bucket": Spec(seconds: 38, vbitrate: "2M", script: "bucket-proxy", schedule: "0:10000000,4:1000000,24:10000000",
                       proxyOptions: ["--burst", "32768", "--rcvbuf", "8192"], extra: [],
                       partner: ("steps", "testBitRateFollowsALinkThatSteps")),
        "steps": Spec(seconds: 48, vbitrate: "1.5M", script: "throttle-proxy", schedule: "0:2000000,4:1000000,20:500000,36:2000000",
                      proxyOptions: [], extra: ["--min-vbitrate", "200k"],
                      partner: ("bucket", "testBitRateSettlesBehindABurstyTokenBucket")),
        "deep": Spec(seconds: 38, vbitrate: "2M", script: "bucket-proxy", schedule: "0:10000000,4:1000000,24:10000000",
                     proxyOptions: ["--burst", "65536", "--rcvbuf", "8192"], extra: [],
                     partner: ("busy", "testAPictureThatTurnsBusyInTheSqueezeDoesNotFloodTheLink")),
        // Flat grey, which x264 sends at a small part of any target, turning to noise at 12 s.
        "busy": Spec(seconds: 32, vbitrate: "2M", script: "throttle-proxy", schedule: "0:10000000,4:1000000,22:10000000",
                     proxyOptions: [], extra: ["--video", "lavfi:color=c=gray:size=640x360:rate=30,noise=alls=60:allf=t+u:enable='gte(t,12)'"],
                     partner: ("deep", "testBitRateSettlesBehindADeepTokenBucket")),
    ]

    let directory: String
    /// livemux's result, and nginx's recording.
    private(set) var outcome: Result<Tools.Result, Error> = .failure(SetupError("not run"))
    private(set) var recording: String?
    private let done = DispatchSemaphore(value: 0)

    private static let lock = NSLock()
    /// Runs started and not yet read, and every squeeze started (each runs once).
    nonisolated(unsafe) private static var runs: [String: SqueezeRun] = [:]
    nonisolated(unsafe) private static var started: Set<String> = []

    private init(_ spec: Spec) throws {
        directory = try Tools.temporaryDirectory()
        Thread { [self] in
            do {
                try run(spec)
            } catch {
                outcome = .failure(error)
            }
            done.signal()
        }.start()
    }

    /// Squeeze `name`'s run, once it has ended; starts it, and its partner when that one's test
    /// is to run too, if not started yet.
    static func result(of name: String) throws -> SqueezeRun {
        let run: SqueezeRun = try lock.withLock {
            guard let spec = specs[name] else { throw SetupError("no squeeze \(name)") }
            let run = try runs[name] ?? SqueezeRun(spec)
            runs[name] = nil
            started.insert(name)
            if let partner = spec.partner, !started.contains(partner.name) && selected(partner.test) {
                runs[partner.name] = try SqueezeRun(specs[partner.name]!)
                started.insert(partner.name)
            }
            return run
        }
        run.done.wait()
        return run
    }

    /// Waits for runs that no test read (one failed before reading its own) and removes their directories.
    static func finishAll() {
        let left = lock.withLock {
            defer { runs.removeAll() }
            return Array(runs.values)
        }
        for run in left {
            run.done.wait()
            try? FileManager.default.removeItem(atPath: run.directory)
        }
    }

    /// Whether `test` is among those this process runs: all of them when none is named.
    private static func selected(_ test: String) -> Bool {
        let named = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("-") }
        return named.isEmpty || named.contains { $0.contains(test) || $0.hasSuffix("AdaptiveBitrateTests") }
    }

    private func run(_ spec: Spec) throws {
        let server = try RTMPServer(directory: directory)
        try server.start()
        defer { server.stop() }
        let port = try Network.freePort()
        let link = try AdaptiveBitrateTests.proxy(port, to: server.port, schedule: spec.schedule, script: spec.script, spec.proxyOptions, in: directory)
        defer { link.end(signal: SIGKILL) }
        let extra = spec.extra.map { $0.replacingOccurrences(of: "DIR", with: directory) }
        outcome = .success(try Tools.livemux(["record", "--size", "640x360", "--fps", "30", "--vbitrate", spec.vbitrate, "-t", String(spec.seconds)]
                                             + extra + ["-o", "rtmp://127.0.0.1:\(port)/live/key", "--stats", "\(directory)/stats.jsonl"],
                                             timeout: Double(spec.seconds) + 40))
        server.stop()
        recording = try server.recordedFiles().first
    }
}
