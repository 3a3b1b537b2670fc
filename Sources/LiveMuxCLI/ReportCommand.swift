import Foundation
import LiveMux

/// `livemux report FILE [--svg OUT.svg]`: reads a recording back and prints what it holds.
struct ReportCommand {
    var path = ""
    var svgPath: String?
    var overwrite = OutputFiles.Overwrite.refuse

    static let help = """
    USAGE: livemux report FILE [--svg OUT.svg [-y]]

    Reads a recording back packet by packet (no decoding) and prints its streams, duration, GOP
    structure, bit rate, and how well audio and video are interleaved in file order: the largest
    distance between audio and video DTS as the file is read front to back, and every inversion
    (a packet whose DTS lies before one already read from the other stream). Interleaving is
    called BAD when there is an inversion or the distance exceeds 1 s.

      --svg OUT.svg         also draw a timeline: bit rate over time with the keyframes, and the
                            A/V DTS offset in file order; an SVG file that exists is
                            refused unless -y (never the recording itself)
      -y                    overwrite the SVG file if it exists
      -n                    never overwrite (also the default without -y)
      -h, --help            this help
    """

    static func parse(_ arguments: [String]) throws -> ReportCommand {
        var cmd = ReportCommand()
        var files: [String] = []
        var rest = arguments[...]
        while let arg = rest.popFirst() {
            if arg == "--svg" {
                guard let v = rest.popFirst(), !v.isEmpty else { throw UsageError("--svg needs a file name for the SVG") }
                cmd.svgPath = v
            } else if arg.hasPrefix("--svg=") {
                cmd.svgPath = String(arg.dropFirst(6))
            } else if arg == "-y" || arg == "-n" {
                cmd.overwrite = try OutputFiles.overwrite(arg, current: cmd.overwrite)
            } else if arg.hasPrefix("-") && arg != "-" {
                throw UsageError("unknown option '\(arg)' for report (see livemux report --help)")
            } else {
                files.append(arg)
            }
        }
        guard files.count == 1 else {
            throw UsageError(files.isEmpty ? "report needs a file: livemux report FILE [--svg OUT.svg]"
                                           : "report reads one file, not \(files.count)")
        }
        cmd.path = files[0]
        if let svg = cmd.svgPath {
            var claims: [ClaimedFile] = []
            try claims.claim(cmd.path, option: nil)
            try OutputFiles.checkSideFile(svg, option: "--svg", cmd.overwrite, claims: &claims, example: "timeline.svg")
        }
        return cmd
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw LiveMuxError.input("no such file: \(path) (give the path of a recording)")
        }
        LogLevel.quiet.apply()
        let report = try RecordingReport.read(path)
        print(report.text)
        if let svgPath {
            let file = try OutputFile.create(svgPath, overwrite: overwrite == .always)
            try file.write(contentsOf: Data(report.svg.utf8))
            try file.close()
            print("timeline: \(svgPath)")
        }
    }
}
