import Foundation
import LiveMux

/// `livemux record`: parses its options into a `RecordConfiguration`.
struct RecordCommand {
    var configuration = RecordConfiguration()
    var quiet = false
    var verbose = false
    var statsPath: String?
    /// `-y`: the --stats file may replace one that exists.
    var overwriteStats = false
    /// Said once each before recording starts (unless -q): a name that disagrees with -f, HEVC
    /// as Enhanced RTMP to an rtmp:// output.
    var warnings: [String] = []
    /// Says each closed segment when file outputs are cut (`--segment-time`…).
    var segments: SegmentAnnouncer?

    static let help = """
    USAGE: livemux record [options] -o OUTPUT [-o OUTPUT …]

    Captures audio and video, encodes them and muxes them live into ASF or FLV.

    SOURCES (SPEC is FORMAT:URL for any libavdevice or libavformat input, or a file path)
    \(SourceOptions.help)
      --device-timeout S    how long a camera, screen or microphone that fails mid-recording may
                            stay away (its last frame or silence recorded in its place while it
                            is reopened) before the recording ends (default: 30); a source
                            after the first of its kind is left out instead, and taken back
                            when it returns
      --no-video            record audio only (not with --video)
      --no-audio            record video only (not with --audio)
      --no-realtime         read synthetic and file sources as fast as possible
                            (default: paced at real time, like a camera; devices always are)

    VIDEO
      --vcodec h264|hevc    encoder: libx264 or libx265 (default: h264)
      --size WxH            frame size, even; scaled to (default: the source's; 1280x720 for the
                            built-in test source)
      --fps N               frames per second, 1 to 240: 30, 29.97 (= 30000/1001) or 30000/1001
                            (default: the source's, or 30 if it has no fixed rate; 30 for the
                            built-in test source)
      --vbitrate BPS        bit rate, such as 2M or 800k (default: 2M); with a URL output, H.264
                            follows the first URL's link: down at once when it falls behind,
                            back up slowly to this (docs/latency.md)
      --min-vbitrate BPS    the adaptive bit rate's floor; below it video is dropped to the
                            next keyframe (default: a quarter of --vbitrate)
      --no-adaptive-bitrate keep --vbitrate whatever the link does (slow outputs drop video)
      --shared-encode       files, stdout and viewers beside an adapting URL output take its
                            encode, and so its bit rate (default: an encode of their own at
                            --vbitrate, so a failing push never degrades the local recording;
                            twice the CPU of one encode, docs/benchmarks.md)
      --gop SECONDS         keyframe interval (default: 2; with --segment-time, the longest
                            up to 2 that the segment time holds whole, so cuts fall on time)
      --preset NAME         encoder preset (default: veryfast); tuning is zerolatency, no B-frames

    AUDIO
      --acodec aac          encoder (default: aac, FFmpeg's native encoder)
      --sample-rate HZ      an AAC rate, 8000 to 96000 (default: the source's, or the nearest
                            rate AAC takes; 48000 for the built-in tone)
      --channels N          1 or 2 (default: the source's, more mixed down to 2; 2 for the tone)
      --abitrate BPS        bit rate (default: 128k)

    PER OUTPUT
    \(EncodingOptions.help)

    OUTPUT
    \(OutputOptions.help)
      -t SECONDS            stop after this much media (default: until SIGINT or SIGTERM),
                            counted from the first frame captured, not from the start: a
                            device may take a while to deliver it (two PulseAudio sources
                            1.2 to 1.9 s), and the run takes that much longer in wall time

    DISPLAY
      --stats FILE|-        write one JSON object a second (media time, frames in/out/dropped,
                            bit rates, queue depths, A/V offset, drift corrections, latency
                            p50/p95/p99, bytes per output) to FILE, or to stderr with -; the
                            last line ("final": true) covers the whole run. Each field names
                            its unit (media_time_s, latency_ms…): docs/stats.schema.json
      --http HOST:PORT      serve the dashboard over HTTP: a page for a browser at /, which
                            plays the recording live (/live.mp4, and HLS at /live.m3u8, from
                            the first output's encode when it is H.264 and AAC), /stats (the
                            --stats object of the last second, with every output's state),
                            /events (the same, one server-sent event a second), /history (the
                            plotted fields of the last five minutes) and /snapshot.jpg (the
                            newest video frame; ?width=N). Not /live.flv or /live.asf: those
                            are serve's. The browser stream is no output: the run ends with
                            its last output. Addresses as --listen of serve: loopback unless
                            told otherwise; a bare PORT means 127.0.0.1; --viewer-key,
                            --viewer-key-file and --max-viewers as in serve.
      --control-key-file FILE  serve the control API at /api on the --http server (serve: on
                            --listen's): change the job while it runs (mute, volume, an
                            output's bit rate, outputs and sources added or removed, the
                            layout, a segment cut; docs/control.md). Every request carries
                            Authorization: Bearer KEY, KEY being FILE's first line (16
                            characters or more; FILE not readable by other users); a viewer
                            key never grants control. The dashboard opened with #control=KEY
                            (http://HOST:PORT/#control=KEY) shows controls for these; at
                            start livemux prints that URL with the key masked, as "control
                            at http://HOST:PORT/#control=****" (the key is never printed).
                            livemux ctl is its client; docs/control.md
      -q                    no progress line, no warnings (serve: no viewer URLs); errors still show
      -v                    also show FFmpeg's own log
      -h, --help            this help

    The first SIGINT or SIGTERM stops gracefully (encoders flushed, trailer written, exit 0);
    a second SIGINT exits at once with 130. Exit codes: 0 success, 64 usage error (an output
    file that exists without -y too), 1 failure (also when any output stopped while others
    went on: the last line gives every output's fate).
    """

    /// The options `livemux serve` adds to those of record.
    static let serveHelp = """
    USAGE: livemux serve [--listen HOST:PORT] [record options] [-o OUTPUT …]

    Serves the live stream over HTTP to thousands of viewers from one encode and one thread:
      http://HOST:PORT/live.flv   and   http://HOST:PORT/live.asf   (http://HOST:PORT/ lists them)
    and to browsers from the same encode: http://HOST:PORT/ plays it (fragmented MP4 at
    /live.mp4 through Media Source Extensions), and HLS is at /live.m3u8.
    A viewer joining mid-stream starts at the latest keyframe. -o outputs work as in record.

    \(OutputOptions.listenHelp)
                            Default for serve: 127.0.0.1:8080.
    \(OutputOptions.viewerHelp)

    """

    /// How much longer than --segment-time a segment may be unsaid: a millisecond, the containers' unit.
    private static let segmentSlack = 0.001

    /// Said when a --gop given makes segments longer than --segment-time.
    private static func segmentWarning(_ policy: SegmentPolicy, gop: Double) -> String? {
        guard let duration = policy.duration, let length = policy.lengthCut(everyKeyframe: gop), length > duration + segmentSlack else { return nil }
        return String(format: "--gop %g s does not divide --segment-time %g s: segments are cut at keyframes, so each will last about %g s;"
                      + " give a --gop that divides it, or leave --gop out to have one chosen", gop, duration, length)
    }

    /// Encode options that are the job's alone: after an `-o` they would read as that output's.
    private static let jobEncodeOptions: Set = ["--gop", "--preset", "--acodec", "-c:a", "--sample-rate", "-ar", "--channels", "-ac",
                                                "--min-vbitrate", "--no-adaptive-bitrate", "--shared-encode"]

    static func parse(_ arguments: [String], serving: Bool = false) throws -> RecordCommand {
        var cmd = RecordCommand()
        var c = RecordConfiguration()
        var reader = ArgumentReader(arguments)
        var sources = SourceOptions()
        var outputs = OutputOptions()
        var encoding = EncodingOptions()
        var control: ControlAccess?
        var controlKeyFile: [(path: String, option: String)] = []
        var gopGiven = false
        if serving { outputs.listenByDefault() }
        while let opt = try reader.nextOption() {
            let outputsBefore = outputs.lastNamed?.index
            if try outputs.take(opt, from: &reader, listen: serving) {
                if let named = outputs.lastNamed, named.index != outputsBefore { try encoding.outputGiven(named) }
                continue
            }
            if try sources.take(opt, from: &reader) { continue }
            if try encoding.take(opt, from: &reader, into: &c) { continue }
            if let named = outputs.lastNamed, Self.jobEncodeOptions.contains(opt.name) {
                throw UsageError("\(opt.name) after -o \(named.name): \(opt.name) is the job's, every output's, not one output's; give it before the first -o")
            }
            switch opt.name {
            case "--no-video": c.recordVideo = false
            case "--no-audio": c.recordAudio = false
            case "--no-realtime": c.realtime = false
            case "--device-timeout": c.deviceTimeout = try Values.seconds(try reader.value(for: opt), option: opt.name)
            case "--realtime": c.realtime = true
            case "--min-vbitrate": c.video.minimumBitRate = try Values.bitRate(try reader.value(for: opt), option: opt.name)
            case "--no-adaptive-bitrate": c.video.adaptiveBitRate = false
            case "--shared-encode": c.video.sharedEncode = true
            case "--gop":
                gopGiven = true
                c.video.gopSeconds = try Values.seconds(try reader.value(for: opt), option: opt.name)
            case "--preset":
                let p = try reader.value(for: opt)
                let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
                guard presets.contains(p) else { throw UsageError("--preset takes one of \(presets.joined(separator: ", ")), not '\(p)'") }
                c.video.preset = p
            case "--acodec", "-c:a": c.audio.codec = try Values.choice(try reader.value(for: opt), option: opt.name, as: AudioCodec.self)
            case "--sample-rate", "-ar":
                let v = try reader.value(for: opt)
                guard let rate = Int(v), AudioSettings.aacSampleRates.contains(rate) else {
                    throw UsageError("\(opt.name) takes an AAC sample rate (\(AudioSettings.aacSampleRates.sorted().map(String.init).joined(separator: ", "))), not '\(v)'")
                }
                c.audio.sampleRate = rate
            case "--channels", "-ac": c.audio.channels = try Values.integer(try reader.value(for: opt), option: opt.name, range: 1...2)
            case "-t", "--duration": c.duration = try Values.seconds(try reader.value(for: opt), option: opt.name)
            case "--stats":
                let path = try reader.value(for: opt)
                guard !path.isEmpty else { throw UsageError("--stats needs a file name, or - for stderr") }
                cmd.statsPath = path
            case "--control-key-file":
                let path = try reader.value(for: opt)
                let key = try SecretFile.firstLine(of: path, option: "--control-key-file ", what: "the control key")
                controlKeyFile = [(path, opt.name)]
                guard let access = ControlAccess(key: key) else {
                    throw UsageError("--control-key-file: a control key needs at least \(ControlAccess.minimumKeyLength) characters (openssl rand -hex 16 makes a good one)")
                }
                control = access
            case "-q", "--quiet": cmd.quiet = true
            case "-v", "--verbose": cmd.verbose = true
            case "--queue-size": c.queueCapacity = try Values.integer(try reader.value(for: opt), option: opt.name, range: 1...100_000)
            default:
                throw UsageError("unknown option '\(opt.name)' for record (see livemux record --help)")
            }
        }
        try encoding.finish()
        try finish(&cmd, &c, sources: sources, outputs: &outputs, encoding: encoding, control: control.map { ($0, controlKeyFile) }, gopGiven: gopGiven)
        cmd.configuration = c
        return cmd
    }

    /// After the options: checks what they say together, and makes the configuration from them.
    private static func finish(_ cmd: inout RecordCommand, _ c: inout RecordConfiguration, sources: SourceOptions, outputs: inout OutputOptions,
                               encoding: EncodingOptions, control given: (access: ControlAccess, keyFile: [(path: String, option: String)])?,
                               gopGiven: Bool) throws {
        let (control, controlKeyFile) = (given?.access, given?.keyFile ?? [])
        if !c.recordVideo && !c.recordAudio { throw UsageError("--no-video and --no-audio together leave nothing to record") }
        try sources.finish(into: &c)
        // Output files must not be the inputs (a device or lavfi graph is not a file).
        let inputFiles = ([c.input].compactMap { $0 } + c.videoSources + c.audioSources).filter { $0.format == nil }.map(\.url)
        try outputs.finish(inputs: inputFiles, keyFiles: controlKeyFile)
        if let path = cmd.statsPath, path != "-" {
            try outputs.checkSideFile(path, option: "--stats", example: "stats.jsonl")
        }
        c.outputs = outputs.outputs
        encoding.apply(to: &c.outputs)
        if let control {
            guard c.outputs.listen != nil else {
                throw UsageError("--control-key-file needs --http HOST:PORT: the control API is served on that server (serve: on --listen's)")
            }
            c.outputs.controlAccess = control
        }
        if let floor = c.video.minimumBitRate {
            // The floor is the adaptive bit rate's, which follows the first URL output at its own rate.
            let primary = c.outputs.destinations.first(where: \.destination.isNetwork)
            let rate = primary?.encoding.applied(to: c.video).bitRate ?? c.video.bitRate
            if floor > rate {
                throw UsageError("--min-vbitrate \(floor) is above --vbitrate \(rate)\(primary.map { " of \($0.destination.description)" } ?? ""): give a floor at or below the bit rate")
            }
        }
        cmd.overwriteStats = c.outputs.overwriteFiles
        cmd.warnings += outputs.warnings
        if let policy = c.outputs.segments?.policy {
            // Segments are cut at keyframes: without --gop they come where the cuts are due.
            if !gopGiven, let fitted = policy.keyframeInterval(atMost: c.video.gopSeconds) {
                c.video.gopSeconds = fitted
            } else if let warning = Self.segmentWarning(policy, gop: c.video.gopSeconds) {
                cmd.warnings.append(warning)
            }
        }
        cmd.segments = outputs.segmentAnnouncer
        cmd.segments?.quiet = cmd.quiet
        if c.recordVideo, let warning = c.outputs.enhancedRTMPWarning(video: c.video.codec) { cmd.warnings.append(warning) }
        if c.recordVideo, let warning = c.outputs.enhancedFLVWarning(video: c.video.codec) { cmd.warnings.append(warning) }
    }
}
