import Foundation
import LiveMux

/// `livemux ctl`: changes a running job through its control API (`--control-key-file`), and
/// prints the API's JSON answer on stdout.
struct CtlCommand {
    var url = ProcessInfo.processInfo.environment["LIVEMUX_URL"] ?? "http://127.0.0.1:8080/"
    var keyFile = ProcessInfo.processInfo.environment["LIVEMUX_CONTROL_KEY_FILE"]
    var method = "GET"
    var path = ""
    var body: [String: Any]?

    static let help = """
    USAGE: livemux ctl [--url URL] --key-file FILE COMMAND

    Changes a running livemux record or serve through its control API (started with
    --control-key-file and --http, or serve's --listen), and prints the API's JSON answer.

    COMMANDS
      list                  the job: sources (volume, mute, level), outputs (id, target,
                            state, encode settings, bytes)
      mute aN | unmute aN   leave audio source aN out of the mix, or put it back
      volume aN GAIN        aN's gain in the mix: 0.5, 2, or -6dB
      vbitrate oN RATE      output oN's video bit rate (800k, 2M), where its encode is its own
      cut                   cut every file output's segment at the next keyframe (as SIGUSR1)
      outputs add OUTPUT [--vbitrate R] [--size WxH] [--fps F] [--vcodec C] [--abitrate R]
                        [-f asf|flv] [-y]
                            a new output, as -o takes it, from the next keyframe; its own
                            encode unless one with those settings runs; -y replaces a file
      outputs remove oN     end output oN whole (file complete, push closed); the others go on
      sources add --video SPEC | --audio SPEC [--opt KEY=VAL]…
                            a source opened as --video / --audio opens it (a device, a
                            lavfi graph or a file), into the picture where the layout puts
                            the next one, or into the mix at unity; its id (v2, a1 …)
      sources remove vN|aN  a source ends: it leaves the picture, or the mix (v0 and a0 stay)
      reconnect oN          URL output oN connects again at once, from the newest keyframe
      main vN               video source vN becomes the main picture
      layout NAME           where the other video sources go (as --layout: pip, side-by-side…)

    OPTIONS
      --url URL             the job's address, the dashboard URL it printed
                            (default: $LIVEMUX_URL, else http://127.0.0.1:8080/)
      --key-file FILE       the control key on FILE's first line (default:
                            $LIVEMUX_CONTROL_KEY_FILE)

    Outputs are o0, o1 … in the order of their -o; sources v0 … and a0 … as record names them.
    Exit codes: 0 done, 64 usage error, 1 refused by the job (the error line says why) or not reached.
    """

    static func parse(_ arguments: [String]) throws -> CtlCommand {
        var cmd = CtlCommand()
        var words: [String] = []
        var rest = arguments[...]
        while let arg = rest.popFirst() {
            switch arg {
            case "--url":
                guard let v = rest.popFirst() else { throw UsageError("--url needs a value (see --help)") }
                cmd.url = v
            case "--key-file":
                guard let v = rest.popFirst() else { throw UsageError("--key-file needs a value (see --help)") }
                cmd.keyFile = v
            default:
                // A volume may be negative (-6dB): only options named above are options here.
                words.append(arg)
            }
        }
        guard let verb = words.first else { throw UsageError("ctl needs a command: list, mute, unmute, volume, vbitrate, cut, outputs, sources, reconnect, main or layout (see livemux help ctl)") }
        let args = Array(words.dropFirst())
        func expect(_ count: Int, _ usage: String) throws {
            guard args.count == count else { throw UsageError("usage: livemux ctl \(usage)") }
        }
        switch verb {
        case "list":
            try expect(0, "list")
        case "mute", "unmute":
            try expect(1, "\(verb) aN")
            (cmd.method, cmd.path, cmd.body) = ("PATCH", "/api/sources/\(args[0])", ["mute": verb == "mute"])
        case "volume":
            try expect(2, "volume aN GAIN")
            guard let gain = SourceOptions.gain(args[1]) else { throw UsageError("volume takes a GAIN such as 0.5, 2 or -6dB, not '\(args[1])'") }
            (cmd.method, cmd.path, cmd.body) = ("PATCH", "/api/sources/\(args[0])", ["volume": gain])
        case "vbitrate":
            try expect(2, "vbitrate oN RATE")
            (cmd.method, cmd.path, cmd.body) = ("PATCH", "/api/outputs/\(args[0])", ["vbitrate": try Values.bitRate(args[1], option: "vbitrate")])
        case "cut":
            try expect(0, "cut")
            (cmd.method, cmd.path) = ("POST", "/api/segments/cut")
        case "main":
            try expect(1, "main vN")
            (cmd.method, cmd.path, cmd.body) = ("PUT", "/api/layout", ["main": args[0]])
        case "layout":
            try expect(1, "layout NAME")
            (cmd.method, cmd.path, cmd.body) = ("PUT", "/api/layout", ["layout": args[0]])
        case "reconnect":
            try expect(1, "reconnect oN")
            (cmd.method, cmd.path) = ("POST", "/api/outputs/\(args[0])/reconnect")
        case "sources" where args.first == "add":
            (cmd.method, cmd.path) = ("POST", "/api/sources")
            cmd.body = try Self.source(Array(args.dropFirst()))
        case "sources" where args.first == "remove":
            guard args.count == 2 else { throw UsageError("usage: livemux ctl sources remove vN|aN") }
            (cmd.method, cmd.path) = ("DELETE", "/api/sources/\(args[1])")
        case "outputs" where args.first == "remove":
            guard args.count == 2 else { throw UsageError("usage: livemux ctl outputs remove oN") }
            (cmd.method, cmd.path) = ("DELETE", "/api/outputs/\(args[1])")
        case "outputs" where args.first == "add":
            guard args.count >= 2 else { throw UsageError("usage: livemux ctl outputs add OUTPUT [--vbitrate R] [--size WxH] …") }
            (cmd.method, cmd.path) = ("POST", "/api/outputs")
            cmd.body = try Self.output(Array(args.dropFirst()))
        default:
            throw UsageError("unknown ctl command '\(verb)' (list, mute, unmute, volume, vbitrate, cut, outputs add|remove, sources add|remove, reconnect, main, layout; see livemux help ctl)")
        }
        if verb == "list" { cmd.path = "/api" }
        return cmd
    }

    /// `sources add`'s body: `--video SPEC` or `--audio SPEC`, then `--opt KEY=VAL` for it.
    private static func source(_ words: [String]) throws -> [String: Any] {
        let usage = UsageError("usage: livemux ctl sources add --video SPEC | --audio SPEC [--opt KEY=VAL]…")
        var rest = words[...]
        guard let option = rest.popFirst(), ["--video", "--audio"].contains(option), let spec = rest.popFirst() else { throw usage }
        var options: [String: String] = [:]
        while let next = rest.popFirst() {
            guard next == "--opt", let pair = rest.popFirst() else { throw usage }
            let (key, value) = try Values.keyValue(pair, option: "--opt")
            options[key] = value
        }
        var body: [String: Any] = [String(option.dropFirst(2)): spec]
        if !options.isEmpty { body["options"] = options }
        return body
    }

    /// `outputs add`'s body: the output, then its settings (record's encode options, named after it here).
    private static func output(_ words: [String]) throws -> [String: Any] {
        // As -o: @FILE and ${NAME} keep a stream key out of ps.
        var body: [String: Any] = ["output": try SecretOutputArgument.resolve(words[0])]
        var rest = words.dropFirst()
        let fields = ["--vbitrate": "vbitrate", "-b:v": "vbitrate", "--abitrate": "abitrate", "-b:a": "abitrate", "--size": "size", "-s": "size",
                      "--fps": "fps", "-r": "fps", "--vcodec": "vcodec", "-c:v": "vcodec", "-f": "format", "--format": "format"]
        while let option = rest.popFirst() {
            if option == "-y" {
                body["overwrite"] = true
                continue
            }
            guard let field = fields[option] else {
                throw UsageError("outputs add takes --vbitrate, --size, --fps, --vcodec, --abitrate, -f and -y after the output, not '\(option)'")
            }
            guard let value = rest.popFirst() else { throw UsageError("\(option) needs a value") }
            switch field {
            case "vbitrate", "abitrate": body[field] = try Values.bitRate(value, option: option)
            case "size":
                let (w, h) = try Values.size(value, option: option)
                body[field] = "\(w)x\(h)"
            case "fps": body[field] = try Values.frameRate(value, option: option).description
            default: body[field] = value
            }
        }
        return body
    }

    func run() throws {
        guard let keyFile else { throw UsageError("ctl needs the control key: --key-file FILE (the job's --control-key-file)") }
        let key = try SecretFile.firstLine(of: keyFile, option: "--key-file ", what: "the control key")
        let (status, answer) = try ControlClient(url: url, key: key).send(method, path, json: body)
        let said = try? JSONSerialization.jsonObject(with: answer)
        guard (200..<300).contains(status) else {
            // A job's server without the API answers /api as any unknown path: in text, not JSON.
            if status == 404, said == nil {
                throw LiveMuxError.output("the job at \(url) has no control API: start it with --control-key-file FILE (record: with --http HOST:PORT too)")
            }
            let error = (said as? [String: Any])?["error"] as? String
            throw LiveMuxError.output("\(error ?? String(decoding: answer, as: UTF8.self)) (HTTP \(status))")
        }
        // For a person at a terminal as much as a script: indented, slashes as they are.
        let shown = said.flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) }
        FileHandle.standardOutput.write((shown ?? answer) + Data("\n".utf8))
    }
}
