import LiveMux

/// `livemux mux`: parses its options into a `MuxConfiguration`.
struct MuxCommand {
    var configuration = MuxConfiguration()
    var quiet = false
    var verbose = false
    /// Said once each before muxing starts (unless -q): a name that disagrees with -f, a
    /// non-loopback --listen.
    var warnings: [String] = []
    /// Says each closed segment when file outputs are cut (`--segment-time`…).
    var segments: SegmentAnnouncer?

    static let help = """
    USAGE: livemux mux (--input FILE | --video FILE [--audio FILE] | --audio FILE) -o OUTPUT [-o OUTPUT …]

    Muxes streams that are already encoded (H.264/HEVC and AAC) into ASF or FLV, without
    re-encoding: the same muxer, mux thread and outputs as 'livemux record' — files, stdout,
    URLs pushed live, HTTP viewers.

    INPUTS
      --input FILE          the first video and first audio stream of any container (mp4, mkv, flv…);
                            - (or pipe:0) reads stdin: cat movie.flv | livemux mux --input - …
      --video FILE          video: an elementary stream (.h264/.264, .h265/.hevc; Annex B) or a container
      --audio FILE          audio: ADTS (.aac) or a container with AAC
      --fps N               frame rate of elementary video streams, which carry no timestamps:
                            30, 29.97 (= 30000/1001) or 30000/1001 (default: the rate their SPS
                            or VPS timing info states, else 25 with a warning)
                            Audio is timed by its frame count (1024 samples a frame), never rounded.
      --realtime            hand packets over at their own timestamps, as a live source would
                            (like ffmpeg -re); the default when an output is a URL or --listen
      --no-realtime         as fast as the files can be read (the default for files and stdout)

    OUTPUT
    \(OutputOptions.help)
    \(OutputOptions.listenHelp)
    \(OutputOptions.viewerHelp)

    CHECKS
      --allow-drops         succeed even when more than 1% of a stream's packets had to be dropped
                            (bad packets, timestamps that do not increase); without it that is a
                            failure (exit 1), and the output keeps what could be muxed

    DISPLAY
      -q                    no progress line, no warnings, no viewer URLs
      -v                    also show FFmpeg's own log
      -h, --help            this help

    Bad packets (no parameter sets yet, unreadable NAL units or ADTS headers, timestamps that do
    not increase) are dropped and counted. A container that stores no decoding timestamps
    (Matroska) gets them derived from the presentation order, so B-frames are kept. The first
    SIGINT or SIGTERM stops gracefully (what was read is muxed, trailers written). Exit codes:
    0 success, 64 usage error, 1 failure (also when any output stopped while others went on).
    """

    static func parse(_ arguments: [String]) throws -> MuxCommand {
        var cmd = MuxCommand()
        var c = MuxConfiguration()
        var reader = ArgumentReader(arguments)
        var outputs = OutputOptions()
        var realtime: Bool?
        while let opt = try reader.nextOption() {
            if try outputs.take(opt, from: &reader, listen: true) { continue }
            switch opt.name {
            case "--input", "-i": c.input = Self.path(try reader.value(for: opt))
            case "--video": c.video = Self.path(try reader.value(for: opt))
            case "--audio": c.audio = Self.path(try reader.value(for: opt))
            case "--fps", "-r": c.fps = try Values.frameRate(try reader.value(for: opt), option: opt.name)
            case "--realtime", "-re": realtime = true
            case "--no-realtime": realtime = false
            case "--allow-drops": c.allowDrops = true
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
        if let video = c.video, let audio = c.audio, SourceSpec.isStandardInput(video) && SourceSpec.isStandardInput(audio) {
            throw UsageError("--video and --audio cannot both read stdin: give one input with both streams as --input -")
        }
        try outputs.finish(inputs: [c.input, c.video, c.audio].compactMap { $0 })
        c.outputs = outputs.outputs
        // A URL or a viewer needs packets at the pace they play, not as fast as a disk reads.
        c.realtime = realtime ?? outputs.isLive
        cmd.warnings = outputs.warnings
        cmd.segments = outputs.segmentAnnouncer
        cmd.segments?.quiet = cmd.quiet
        cmd.configuration = c
        return cmd
    }

    /// An input as libavformat opens it: `-` is stdin, as `ffmpeg -i -` reads it.
    private static func path(_ value: String) -> String { value == "-" ? SourceSpec.standardInput : value }
}
