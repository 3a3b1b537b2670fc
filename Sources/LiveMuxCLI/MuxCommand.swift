import LiveMux

/// `livemux mux`: parses its options into a `MuxConfiguration`.
struct MuxCommand {
    var configuration = MuxConfiguration()
    var quiet = false
    var verbose = false

    static let help = """
    USAGE: livemux mux (--input FILE | --video FILE [--audio FILE] | --audio FILE) -o OUTPUT

    Muxes streams that are already encoded (H.264/HEVC and AAC) into ASF or FLV, without
    re-encoding: the same muxer and mux thread as 'livemux record'.

    INPUTS
      --input FILE          the first video and first audio stream of any container (mp4, mkv, flv…)
      --video FILE          video: an elementary stream (.h264/.264, .h265/.hevc; Annex B) or a container
      --audio FILE          audio: ADTS (.aac) or a container with AAC
      --fps N               frame rate of elementary video streams, which carry no timing (default: 25)
                            Audio is timed by its frame count (1024 samples a frame), never rounded.

    OUTPUT
      -o FILE|-             where to write; '-' is stdout (a streamable container)
      -f asf|flv            container (default: from the file name, .asf or .flv, else asf)
      --flv-hevc enhanced|codec12  how FLV carries HEVC: Enhanced RTMP (FourCC hvc1) or codec
                            id 12 (default: enhanced; ignored for H.264)

    DISPLAY
      -q                    no progress line, no warnings
      -v                    also show FFmpeg's own log
      -h, --help            this help

    Bad packets (no parameter sets yet, unreadable NAL units or ADTS headers, timestamps that do
    not increase) are dropped and counted. Exit codes: 0 success, 64 usage error, 1 failure.
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
            case "--fps", "-r": c.fps = try Values.integer(try reader.value(for: opt), option: opt.name, range: 1...240)
            case "-f", "--format": format = try Values.choice(try reader.value(for: opt), option: opt.name, as: ContainerFormat.self)
            case "--flv-hevc": c.flvHEVC = try Values.choice(try reader.value(for: opt), option: opt.name, as: FLVHEVCMode.self)
            case "-o", "--output":
                guard output == nil else { throw UsageError("mux writes one output: give -o once") }
                let o = try reader.value(for: opt)
                guard !o.isEmpty else { throw UsageError("-o needs a file name or - for stdout") }
                output = o
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
        guard let f = format ?? ContainerFormat.implied(by: output) ?? (output == "-" ? .asf : nil) else {
            throw UsageError("cannot tell the container of '\(output)' from its name: add -f asf or -f flv")
        }
        c.format = f
        c.output = output == "-" ? .standardOutput : .file(output)
        cmd.configuration = c
        return cmd
    }
}
