import LiveMux

/// `livemux mux`: parses its options into a `MuxConfiguration`.
struct MuxCommand {
    var configuration = MuxConfiguration()
    var quiet = false
    var verbose = false
    var overwrite = OutputFiles.Overwrite.refuse
    /// Said once before muxing starts (unless -q): a name that disagrees with -f.
    var warnings: [String] = []

    static let help = """
    USAGE: livemux mux (--input FILE | --video FILE [--audio FILE] | --audio FILE) -o OUTPUT

    Muxes streams that are already encoded (H.264/HEVC and AAC) into ASF or FLV, without
    re-encoding: the same muxer and mux thread as 'livemux record'.

    INPUTS
      --input FILE          the first video and first audio stream of any container (mp4, mkv, flv…)
      --video FILE          video: an elementary stream (.h264/.264, .h265/.hevc; Annex B) or a container
      --audio FILE          audio: ADTS (.aac) or a container with AAC
      --fps N               frame rate of elementary video streams, which carry no timestamps:
                            30, 29.97 (= 30000/1001) or 30000/1001 (default: the rate their SPS
                            or VPS timing info states, else 25 with a warning)
                            Audio is timed by its frame count (1024 samples a frame), never rounded.

    OUTPUT
      -o FILE|-             where to write; '-' is stdout (a streamable container)
      -f asf|flv            container (default: from the file name, .asf/.wmv or .flv; ASF for
                            stdout; any other name needs -f, as in record)
      --flv-hevc enhanced|codec12  how FLV carries HEVC: Enhanced RTMP (FourCC hvc1) or codec
                            id 12 (default: enhanced; ignored for H.264)
      -y                    overwrite the output file if it exists
      -n                    never overwrite: refuse if it exists (also the default without -y)

    CHECKS
      --allow-drops         succeed even when more than 1% of a stream's packets had to be dropped
                            (bad packets, timestamps that do not increase); without it that is a
                            failure (exit 1), and the output keeps what could be muxed

    DISPLAY
      -q                    no progress line, no warnings
      -v                    also show FFmpeg's own log
      -h, --help            this help

    Bad packets (no parameter sets yet, unreadable NAL units or ADTS headers, timestamps that do
    not increase) are dropped and counted. A container that stores no decoding timestamps
    (Matroska) gets them derived from the presentation order, so B-frames are kept. Exit codes: 0 success, 64 usage error, 1 failure.
    """

    static func parse(_ arguments: [String]) throws -> MuxCommand {
        var cmd = MuxCommand()
        var c = MuxConfiguration()
        var reader = ArgumentReader(arguments)
        var output: String?
        var format: ContainerFormat?
        while let opt = try reader.nextOption() {
            switch opt.name {
            case "--input", "-i": c.input = try reader.value(for: opt)
            case "--video": c.video = try reader.value(for: opt)
            case "--audio": c.audio = try reader.value(for: opt)
            case "--fps", "-r": c.fps = try Values.frameRate(try reader.value(for: opt), option: opt.name)
            case "-f", "--format": format = try Values.choice(try reader.value(for: opt), option: opt.name, as: ContainerFormat.self)
            case "--flv-hevc": c.outputs.flvHEVC = try Values.choice(try reader.value(for: opt), option: opt.name, as: FLVHEVCMode.self)
            case "-o", "--output":
                guard output == nil else { throw UsageError("mux writes one output: give -o once") }
                let o = try reader.value(for: opt)
                guard !o.isEmpty else { throw UsageError("-o needs a file name or - for stdout") }
                output = o
            case "--allow-drops": c.allowDrops = true
            case "-y", "-n": cmd.overwrite = try OutputFiles.overwrite(opt.name, current: cmd.overwrite)
            case "-q", "--quiet": cmd.quiet = true
            case "-v", "--verbose": cmd.verbose = true
            default:
                throw UsageError("unknown option '\(opt.name)' for mux (see livemux mux --help)")
            }
        }
        if c.input == nil && c.video == nil && c.audio == nil {
            throw UsageError("nothing to mux: give --input FILE, or --video FILE and/or --audio FILE")
        }
        if c.input != nil && (c.video != nil || c.audio != nil) {
            throw UsageError("--input carries both streams: use it alone, or --video and --audio instead")
        }
        guard let output else { throw UsageError("no output: give -o FILE or -o - for stdout") }
        let (f, warning) = try OutputFiles.container(of: output, given: format, fallback: output == "-" ? .asf : nil)
        c.outputs.destinations = [OutputSpec(destination: output == "-" ? .standardOutput : .file(output), format: f)]
        if output != "-" {
            if let warning { cmd.warnings.append(warning) }
            try OutputFiles.check(output, cmd.overwrite, format: f)
        }
        c.outputs.overwriteFiles = cmd.overwrite == .always
        cmd.configuration = c
        return cmd
    }
}
