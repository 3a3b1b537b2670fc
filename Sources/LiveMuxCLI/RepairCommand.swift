import Foundation
import LiveMux

/// `livemux repair FILE [-o OUT]`: remuxes what can be read of an ASF or FLV recording that was
/// never finished (SIGKILL, a power loss) into a file with its duration, sizes and index. It is
/// `livemux mux --input FILE` under the name people look for, with the output named for them.
struct RepairCommand {
    var path = ""
    var output = ""
    /// The container the input's bytes say it is.
    var format = ContainerFormat.asf
    /// Whether the input was finished already (its copy is then only a remux).
    var wasFinalised = false
    /// The `mux` that does the work: its checks of the output (exists, is the input) and its job.
    var mux = MuxCommand()

    static let help = """
    USAGE: livemux repair FILE [-o OUT] [-y|-n] [-q] [-v]

    Repairs an ASF or FLV recording that was cut off before its end was written (the process
    was killed with SIGKILL, the machine lost power): such a file has no duration and no index,
    so players cannot seek in it and show no length ('livemux report FILE' says "finalised: NO").
    Every whole packet that can be read is remuxed, without re-encoding, into a new finalised
    file; FILE itself is only read.

      -o OUT                the repaired file (default: beside FILE, with .repaired before its
                            extension: rec.asf gives rec.repaired.asf); its container follows
                            its name (.asf, .flv), else FILE's
      -y                    overwrite OUT if it exists
      -n                    never overwrite (also the default without -y)
      -q                    no warnings and no summary
      -v                    also show FFmpeg's own log
      -h, --help            this help

    Prints one line at the end: what was kept (duration, video and audio frames). Exit codes:
    0 repaired, 64 usage error (OUT exists without -y), 1 FILE is not ASF or FLV, or holds
    nothing readable.
    """

    static func parse(_ arguments: [String]) throws -> RepairCommand {
        var cmd = RepairCommand()
        var files: [String] = []
        var output: String?
        var passed: [String] = []
        var rest = arguments[...]
        while let arg = rest.popFirst() {
            switch arg {
            case "-o", "--output":
                guard let v = rest.popFirst(), !v.isEmpty else { throw UsageError("-o needs a file name for the repaired recording") }
                output = v
            case "-y", "-n", "-q", "--quiet", "-v", "--verbose": passed.append(arg)
            default:
                if arg.hasPrefix("--output=") {
                    output = String(arg.dropFirst("--output=".count))
                } else if arg.hasPrefix("-") {
                    throw UsageError("unknown option '\(arg)' for repair (see livemux repair --help)")
                } else {
                    files.append(arg)
                }
            }
        }
        guard files.count == 1 else {
            throw UsageError(files.isEmpty ? "repair needs a file: livemux repair FILE [-o OUT]" : "repair reads one file, not \(files.count)")
        }
        cmd.path = files[0]
        guard FileManager.default.fileExists(atPath: cmd.path) else {
            throw LiveMuxError.input("no such file: \(cmd.path) (give the path of an ASF or FLV recording)")
        }
        // The bytes say what it is: a name can lie, and repair remuxes only what livemux writes.
        guard let finalisation = Finalisation.read(cmd.path) else {
            throw LiveMuxError.input("\(cmd.path) is not an ASF or FLV recording: livemux repair mends what livemux record writes"
                                     + " (see livemux report \(cmd.path) for what it is)")
        }
        cmd.format = finalisation.format
        cmd.wasFinalised = finalisation.isFinalised
        cmd.output = output ?? Self.defaultOutput(for: cmd.path, format: cmd.format)
        // The repair is the recording's own container: a name that says another is refused, as record refuses it.
        if let other = OutputFiles.otherContainer(namedBy: cmd.output) {
            let name = (cmd.output as NSString).deletingPathExtension + "." + cmd.format.rawValue
            throw UsageError("cannot write \(cmd.output): \(other) is not a container livemux writes; the repair is \(cmd.format.rawValue.uppercased()), as \(cmd.path) is: name it \(name)")
        }
        // A name that says no container gets the input's.
        let container = ContainerFormat.implied(by: cmd.output) == nil ? ["-f", cmd.format.rawValue] : []
        // What is cut off at the end (a packet half written) is left out, not a failure.
        cmd.mux = try MuxCommand.parse(["--input", cmd.path] + container + ["-o", cmd.output, "--allow-drops"] + passed)
        return cmd
    }

    /// `rec.asf` → `rec.repaired.asf`, beside the input; a name without the container's
    /// extension gets it (`rec` → `rec.repaired.asf`).
    static func defaultOutput(for path: String, format: ContainerFormat) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = ContainerFormat.implied(by: path) == format ? url.pathExtension : format.rawValue
        let stem = ContainerFormat.implied(by: path) == format ? url.deletingPathExtension().lastPathComponent : url.lastPathComponent
        let name = "\(stem).repaired.\(ext)"
        return path.contains("/") ? url.deletingLastPathComponent().appendingPathComponent(name).path : name
    }

    /// The error for an input whose every packet is lost: it was cut off before its first media
    /// reached the disk, or its header is all there is.
    func nothingReadable(_ cause: String? = nil) -> LiveMuxError {
        .input("nothing readable in \(path)\(cause.map { " (\($0))" } ?? ""): it holds no whole audio or video packet"
               + " (cut off before its first media was written), so there is nothing to repair; record it again")
    }

    /// The one line said at the end: what the repaired file holds.
    func summary(_ s: StatisticsSnapshot) -> String {
        let what = wasFinalised ? "remuxed \(path) (it was finalised already)" : "repaired \(path)"
        let written = ContainerFormat.implied(by: output) ?? format
        let finished = written == .asf ? "ASF, with its duration and index" : "FLV, with its duration"
        return "\(what) into \(output) (\(finished)): kept "
            + String(format: "%.3f s", s.mediaTime) + ", \(s.video.packetsOut) video frames and \(s.audio.packetsOut) audio frames"
            + (s.dropped > 0 ? "; \(s.dropped) damaged packets left out" : "")
    }
}
