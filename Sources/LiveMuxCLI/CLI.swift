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
            if rest.contains("-h") || rest.contains("--help") {
                print((serving ? RecordCommand.serveHelp : "") + RecordCommand.help)
                return ExitCode.success.rawValue
            }
            do {
                return try record(RecordCommand.parse(rest, serving: serving)).rawValue
            } catch let error as UsageError {
                Terminal.error(error.description)
                return ExitCode.usage.rawValue
            } catch {
                Terminal.error(String(describing: error))
                return ExitCode.failure.rawValue
            }
        case "mux":
            if rest.contains("-h") || rest.contains("--help") {
                print(MuxCommand.help)
                return ExitCode.success.rawValue
            }
            do {
                return try mux(MuxCommand.parse(rest)).rawValue
            } catch let error as UsageError {
                Terminal.error(error.description)
                return ExitCode.usage.rawValue
            } catch {
                Terminal.error(String(describing: error))
                return ExitCode.failure.rawValue
            }
        case "report":
            if rest.contains("-h") || rest.contains("--help") {
                print(ReportCommand.help)
                return ExitCode.success.rawValue
            }
            do {
                try ReportCommand.parse(rest).run()
                return ExitCode.success.rawValue
            } catch let error as UsageError {
                Terminal.error(error.description)
                return ExitCode.usage.rawValue
            } catch {
                Terminal.error(String(describing: error))
                return ExitCode.failure.rawValue
            }
        default:
            Terminal.error("unknown command '\(command)' (commands: record, serve, mux, report; see livemux --help)")
            return ExitCode.usage.rawValue
        }
    }

    static func record(_ cmd: RecordCommand) throws -> ExitCode {
        // FFmpeg's own log only with -v: our errors already carry its message, in one line.
        (cmd.verbose ? LogLevel.verbose : .quiet).apply()
        let stats = try cmd.statsPath.map { try StatsWriter(path: $0) }
        let pipeline = try Pipeline(cmd.configuration, quiet: cmd.quiet) { message in
            if !cmd.quiet { Terminal.warning(message) }
        }
        _ = SignalHandling { pipeline.stop() }
        let progress = cmd.quiet ? nil : ProgressLine(pipeline: pipeline)
        pipeline.start()
        progress?.start()
        stats?.start(pipeline)
        defer { progress?.finish() }
        defer { stats?.finish() }
        do {
            try pipeline.wait()
        } catch {
            progress?.finish()
            Terminal.error(Self.describe(error))
            return .failure
        }
        return .success
    }

    static func mux(_ cmd: MuxCommand) throws -> ExitCode {
        // Probing bad input makes FFmpeg log decoder noise; our own error line says what matters.
        (cmd.verbose ? LogLevel.verbose : .quiet).apply()
        let job = try FileMuxJob(cmd.configuration) { message in
            if !cmd.quiet { Terminal.warning(message) }
        }
        _ = SignalHandling { job.stop() }
        let progress = cmd.quiet ? nil : ProgressLine { job.statisticsSnapshot }
        job.start()
        progress?.start()
        defer { progress?.finish() }
        do {
            try job.wait()
        } catch {
            progress?.finish()
            Terminal.error(Self.describe(error))
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
