import Foundation
import LiveMux

/// The `livemux` command line: parses, runs, and maps the outcome to an exit code.
public enum CLI {
    public enum ExitCode: Int32 {
        case success = 0, failure = 1, usage = 64, interrupted = 130
    }

    static let help = """
    USAGE: livemux <command> [options]

    Captures, encodes and muxes audio and video live into ASF or FLV, to a file or stdout.

    COMMANDS
      record    capture from devices or test sources, encode (H.264/HEVC + AAC), mux live
                try: livemux record -t 10 -o demo.asf   (then: ffplay demo.asf)
      serve     the same, and serve live viewers over HTTP (/live.flv, /live.asf, /live.mp4, HLS)
                try: livemux serve --listen 127.0.0.1:8080   (then: ffplay http://127.0.0.1:8080/live.flv)
      mux       mux already-encoded H.264/HEVC + AAC (files, elementary streams) without re-encoding
                try: livemux mux --video clip.h264 --audio clip.aac -o clip.flv
      devices   list the capture devices found (pulse, alsa, X displays, v4l2 cameras)
      report    read a recording back: streams, GOP, bit rate, interleaving; --svg timeline
      repair    finalise a recording cut off by SIGKILL or a power loss (no duration, no index)
                try: livemux repair rec.asf   (writes rec.repaired.asf)
      ctl       change a running record or serve (sources and outputs added and removed,
                mute, volume, an output's bit rate, a reconnect, the layout, a cut)
                through its control API: livemux ctl --key-file key.txt list

    Run 'livemux help <command>' or 'livemux <command> --help' for the options of a command,
    'livemux --version' for the version, the FFmpeg libraries and the encoders found.
    Exit codes: 0 success, 64 usage error, 1 failure, 130 cut short by a second signal.
    """

    public static func main(_ arguments: [String]) -> Int32 {
        SignalHandling.hold()
        SignalHandling.ignoreBrokenPipe()
        switch arguments.first {
        case "record", "serve", "mux", "repair": break
        default: SignalHandling.release()
        }
        guard let command = arguments.first else {
            Terminal.write(help + "\n")
            return ExitCode.usage.rawValue
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "-h", "--help", "help":
            // `livemux help record` is `livemux record --help`.
            guard let topic = rest.first, command == "help" else {
                print(help)
                return ExitCode.success.rawValue
            }
            guard let text = commandHelp(topic), rest.count == 1 else {
                Terminal.error("no help for '\(rest.joined(separator: " "))' (commands: \(commands); see livemux --help)")
                return ExitCode.usage.rawValue
            }
            print(text)
            return ExitCode.success.rawValue
        case "--version", "-V":
            print(versionText)
            return ExitCode.success.rawValue
        case "record", "serve":
            let serving = command == "serve"
            return run(rest, help: commandHelp(command)!) {
                try record(RecordCommand.parse(rest, serving: serving))
            }
        case "mux":
            return run(rest, help: MuxCommand.help) { try mux(MuxCommand.parse(rest)) }
        case "repair":
            return run(rest, help: RepairCommand.help) { try repair(RepairCommand.parse(rest)) }
        case "report":
            return run(rest, help: ReportCommand.help) {
                try ReportCommand.parse(rest).run()
                return .success
            }
        case "ctl":
            return run(rest, help: CtlCommand.help) {
                try CtlCommand.parse(rest).run()
                return .success
            }
        case "devices":
            return run(rest, help: DevicesCommand.help) {
                try DevicesCommand.parse(rest).run()
                return .success
            }
        default:
            Terminal.error("unknown command '\(command)' (commands: \(commands); see livemux --help)")
            return ExitCode.usage.rawValue
        }
    }

    static let commands = "record, serve, mux, report, repair, devices, ctl"

    /// The help of one command, as its --help prints it; nil for an unknown command.
    static func commandHelp(_ command: String) -> String? {
        switch command {
        case "record": return RecordCommand.help
        case "serve": return RecordCommand.serveHelp + RecordCommand.help
        case "mux": return MuxCommand.help
        case "report": return ReportCommand.help
        case "repair": return RepairCommand.help
        case "devices": return DevicesCommand.help
        case "ctl": return CtlCommand.help
        default: return nil
        }
    }

    /// The version of livemux; set by hand at a release.
    static let version = "0.1.0"

    /// `livemux --version`: this version, the FFmpeg libraries it runs on, the encoders found.
    static var versionText: String {
        var lines = ["livemux \(version)", "FFmpeg \(Capabilities.ffmpegRelease), run-time libraries:"]
        lines += Capabilities.libraryVersions.map { "  \($0)" }
        lines.append("encoders:")
        lines += Capabilities.encoders.map { "  \($0.codec): \($0.encoder) \($0.found ? "found" : "NOT FOUND")" }
        return lines.joined(separator: "\n")
    }

    /// Prints a command's help when asked, else runs it and maps what it throws to an exit code:
    /// a usage error is 64, anything else 1, each as one `error:` line.
    private static func run(_ arguments: [String], help: String, _ body: () throws -> ExitCode) -> Int32 {
        if arguments.contains("-h") || arguments.contains("--help") {
            print(help)
            return ExitCode.success.rawValue
        }
        do {
            return try body().rawValue
        } catch let error as UsageError {
            Terminal.error(error.description)
            return ExitCode.usage.rawValue
        } catch LiveMuxError.usage(let message) {
            Terminal.error(message)
            return ExitCode.usage.rawValue
        } catch {
            report(error, verbose: arguments.contains("-v") || arguments.contains("--verbose"))
            return ExitCode.failure.rawValue
        }
    }

    static func record(_ cmd: RecordCommand) throws -> ExitCode {
        let signals = SignalHandling.start(quiet: cmd.quiet)
        // FFmpeg's own log only with -v: our errors already carry its message, in one line.
        (cmd.verbose ? LogLevel.verbose : .quiet).apply()
        if !cmd.quiet { cmd.warnings.forEach(Terminal.warning) }
        let pipeline = try Pipeline(cmd.configuration, quiet: cmd.quiet) { message in
            if !cmd.quiet { Terminal.warning(message) }
        }
        pipeline.keepWarnings(cmd.warnings)
        // Created once everything else was checked and built: a failed start leaves no stats file.
        let stats = try cmd.statsPath.map { try StatsWriter(path: $0, overwrite: cmd.overwriteStats) }
        try cmd.segments?.open(overwrite: cmd.configuration.outputs.overwriteFiles)
        return supervise(pipeline, signals: signals, quiet: cmd.quiet, verbose: cmd.verbose, stats: stats, segments: cmd.configuration.outputs.segments,
                         control: cmd.configuration.outputs.controlAccess)
    }

    static func mux(_ cmd: MuxCommand) throws -> ExitCode {
        let signals = SignalHandling.start(quiet: cmd.quiet)
        // Probing bad input makes FFmpeg log decoder noise; our own error line says what matters.
        (cmd.verbose ? LogLevel.verbose : .quiet).apply()
        if !cmd.quiet { cmd.warnings.forEach(Terminal.warning) }
        let job = try FileMuxJob(cmd.configuration) { message in
            if !cmd.quiet { Terminal.warning(message) }
        }
        try cmd.segments?.open(overwrite: cmd.configuration.outputs.overwriteFiles)
        return supervise(job, signals: signals, quiet: cmd.quiet, verbose: cmd.verbose, remux: true, segments: cmd.configuration.outputs.segments)
    }

    /// `livemux repair`: `mux` of the input with no progress line, and one line at the end saying
    /// what was kept. An input that opens to nothing (its header alone) is no repair: its empty
    /// copy is removed and said to hold nothing readable.
    static func repair(_ cmd: RepairCommand) throws -> ExitCode {
        let signals = SignalHandling.start(quiet: cmd.mux.quiet)
        (cmd.mux.verbose ? LogLevel.verbose : .quiet).apply()
        let job: FileMuxJob
        do {
            job = try FileMuxJob(cmd.mux.configuration) { message in
                if !cmd.mux.quiet { Terminal.warning(message) }
            }
        } catch let error as ExplainedError {
            // The bytes are ASF or FLV (checked in parse), so a reader that cannot open them found
            // no whole packet: an FLV cut off after its metadata ends there.
            if cmd.mux.verbose { report(error, verbose: true) }
            throw cmd.nothingReadable()
        }
        let code = supervise(job, signals: signals, quiet: true, verbose: cmd.mux.verbose, remux: true)
        guard code == .success else { return code }
        let kept = job.statisticsSnapshot
        guard kept.video.packetsOut + kept.audio.packetsOut > 0 else {
            try? FileManager.default.removeItem(atPath: cmd.output)
            throw cmd.nothingReadable()
        }
        if !cmd.mux.quiet { Terminal.write(cmd.summary(kept) + "\n") }
        return .success
    }

    /// Runs a job to its end, for every command: the viewer URLs once, then the first SIGINT or
    /// SIGTERM (or one that came while the job was built) stops it gracefully, SIGUSR1 cuts the
    /// segments, the progress line (and `--stats`) show while it runs, and a failure becomes one
    /// `error:` line and exit code 1.
    private static func supervise(_ job: LiveJob, signals: SignalHandling, quiet: Bool, verbose: Bool, remux: Bool = false,
                                  stats: StatsWriter? = nil, segments: SegmentPlan? = nil, control: ControlAccess? = nil) -> ExitCode {
        // Where it listens is not chatter (port 0 picks one): said even with -q, but then with the
        // viewer key masked, as -q is how the key stays out of a log others read (docs/security.md).
        func shown(_ url: String) -> String { quiet ? maskedURL(url) : url }
        if !job.viewerURLs.isEmpty {
            Terminal.write("serving viewers at \(job.viewerURLs.map(shown).joined(separator: " and "))\n")
        }
        if !job.browserURLs.isEmpty {
            Terminal.write("browsers play \(job.browserURLs.map(shown).joined(separator: " and "))\n")
        }
        if let dashboard = job.dashboardURL { Terminal.write("dashboard at \(shown(dashboard))\n") }
        // Masked even without -q: the control key changes the job, and who started it has it in its file.
        if let control, let dashboard = job.dashboardURL {
            Terminal.write("control at \(maskedURL(control.pageURL(dashboard: dashboard)))\n")
        }
        signals.attach(stop: job.stop, started: { job.statisticsSnapshot.everyStreamStarted }) {
            guard let segments else {
                if !quiet { Terminal.warning("SIGUSR1 cuts segments, and no output is segmented (give --segment-time or --segment-size)") }
                return
            }
            segments.requestCut()
        }
        defer { signals.finish() }
        let progress = quiet ? nil : ProgressLine(remux: remux, snapshot: { job.statisticsSnapshot })
        defer { stats?.finish() }
        job.start()
        stats?.start(job)
        progress?.start()
        defer { progress?.finish() }
        do {
            try job.wait()
        } catch {
            progress?.finish()
            report(error, verbose: verbose, stopped: remux ? "muxing" : "recording")
            return .failure
        }
        return .success
    }

    /// One `error:` line that names the problem and, where there is one, the fix; with -v, a
    /// `debug:` line before it with FFmpeg's function and code.
    static func report(_ error: Error, verbose: Bool, stopped activity: String = "recording") {
        if let sink = error as? SinkError, sink.isClosedByReader {
            return Terminal.error("\(sink.name) was closed by its reader; stopped \(activity)")
        }
        let (message, detail) = ExplainedError.describe(error)
        if verbose, let detail { Terminal.write("debug: \(detail)\n") }
        Terminal.error(message)
    }
}
