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
      serve     the same, and serve live viewers over HTTP (/live.flv, /live.asf)
                try: livemux serve --listen 127.0.0.1:8080   (then: ffplay http://127.0.0.1:8080/live.flv)
      mux       mux already-encoded H.264/HEVC + AAC (files, elementary streams) without re-encoding
                try: livemux mux --video clip.h264 --audio clip.aac -o clip.flv
      report    read a recording back: streams, GOP, bit rate, interleaving; --svg timeline

    Run 'livemux <command> --help' for the options of a command.
    Exit codes: 0 success, 64 usage error, 1 failure, 130 cut short by a second signal.
    """

    public static func main(_ arguments: [String]) -> Int32 {
        SignalHandling.ignoreBrokenPipe()
        SignalHandling.blockStopSignals()
        guard let command = arguments.first else {
            Terminal.write(help + "\n")
            return ExitCode.usage.rawValue
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "-h", "--help", "help":
            print(help)
            return ExitCode.success.rawValue
        case "record", "serve":
            let serving = command == "serve"
            return run(rest, help: (serving ? RecordCommand.serveHelp : "") + RecordCommand.help) {
                try record(RecordCommand.parse(rest, serving: serving))
            }
        case "mux":
            return run(rest, help: MuxCommand.help) { try mux(MuxCommand.parse(rest)) }
        case "report":
            return run(rest, help: ReportCommand.help) {
                try ReportCommand.parse(rest).run()
                return .success
            }
        default:
            Terminal.error("unknown command '\(command)' (commands: record, serve, mux, report; see livemux --help)")
            return ExitCode.usage.rawValue
        }
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
        } catch {
            Terminal.error(describe(error))
            return ExitCode.failure.rawValue
        }
    }

    static func record(_ cmd: RecordCommand) throws -> ExitCode {
        // FFmpeg's own log only with -v: our errors already carry its message, in one line.
        (cmd.verbose ? LogLevel.verbose : .quiet).apply()
        let stats = try cmd.statsPath.map { try StatsWriter(path: $0) }
        let pipeline = try Pipeline(cmd.configuration, quiet: cmd.quiet) { message in
            if !cmd.quiet { Terminal.warning(message) }
        }
        defer { stats?.finish() }
        return supervise(quiet: cmd.quiet, snapshot: { pipeline.statisticsSnapshot }, stop: pipeline.stop, wait: pipeline.wait) {
            pipeline.start()
            stats?.start(pipeline)
        }
    }

    static func mux(_ cmd: MuxCommand) throws -> ExitCode {
        // Probing bad input makes FFmpeg log decoder noise; our own error line says what matters.
        (cmd.verbose ? LogLevel.verbose : .quiet).apply()
        let job = try FileMuxJob(cmd.configuration) { message in
            if !cmd.quiet { Terminal.warning(message) }
        }
        return supervise(quiet: cmd.quiet, snapshot: { job.statisticsSnapshot }, stop: job.stop, wait: job.wait, start: job.start)
    }

    /// Runs a job to its end: the first SIGINT/SIGTERM stops it gracefully, the progress line shows
    /// while it runs, and a failure becomes one `error:` line and exit code 1.
    private static func supervise(quiet: Bool, snapshot: @escaping @Sendable () -> StatisticsSnapshot,
                                  stop: @escaping @Sendable () -> Void, wait: () throws -> Void,
                                  start: () -> Void) -> ExitCode {
        let signals = SignalHandling(onFirst: stop)
        defer { signals.finish() }
        let progress = quiet ? nil : ProgressLine(snapshot: snapshot)
        start()
        progress?.start()
        defer { progress?.finish() }
        do {
            try wait()
        } catch {
            progress?.finish()
            Terminal.error(describe(error))
            return .failure
        }
        return .success
    }

    /// One line that names the problem and, where there is one, the fix.
    static func describe(_ error: Error) -> String {
        if let sink = error as? SinkError, sink.isClosedByReader {
            return "\(sink.name) was closed by its reader; stopped recording"
        }
        return String(describing: error)
    }
}
