import Foundation
import LiveMux

/// `livemux record`: parses its options into a `RecordConfiguration`.
struct RecordCommand {
    var configuration = RecordConfiguration()
    var quiet = false
    var verbose = false
    var statsPath: String?
    var overwrite = OutputFiles.Overwrite.refuse
    /// Said once each before recording starts (unless -q): a name that disagrees with -f.
    var warnings: [String] = []

    static let help = """
    USAGE: livemux record [options] -o OUTPUT [-o OUTPUT …]

    Captures audio and video, encodes them and muxes them live into ASF or FLV.

    SOURCES (SPEC is FORMAT:URL for any libavdevice or libavformat input, or a file path)
      --video SPEC          video source (default: lavfi:testsrc2 at --size and --fps)
      --audio SPEC          audio source (default: lavfi:sine, 440 Hz at --sample-rate)
      --input SPEC          one input carrying both streams, e.g.
                            'lavfi:avsynctest=size=640x360:framerate=30:samplerate=48000[out0][out1]'
      --video-opt KEY=VAL   option for the video device (video_size, framerate, pixel_format…)
      --audio-opt KEY=VAL   option for the audio device (sample_rate, channels…); with --input,
                            both apply to that input
      --no-video            record audio only
      --no-audio            record video only
      --no-realtime         read synthetic and file sources as fast as possible
                            (default: paced at real time, like a camera; devices always are)

    VIDEO
      --vcodec h264|hevc    encoder: libx264 or libx265 (default: h264)
      --size WxH            frame size, even; scaled to (default: the source's; 1280x720 for the
                            built-in test source)
      --fps N               frames per second, 1 to 240: 30, 29.97 (= 30000/1001) or 30000/1001
                            (default: the source's, or 30 if it has no fixed rate; 30 for the
                            built-in test source)
      --vbitrate BPS        bit rate, such as 2M or 800k (default: 2M)
      --gop SECONDS         keyframe interval (default: 2)
      --preset NAME         encoder preset (default: veryfast); tuning is zerolatency, no B-frames

    AUDIO
      --acodec aac          encoder (default: aac, FFmpeg's native encoder)
      --sample-rate HZ      an AAC rate, 8000 to 96000 (default: the source's, or the nearest
                            rate AAC takes; 48000 for the built-in tone)
      --channels N          1 or 2 (default: the source's, more mixed down to 2; 2 for the tone)
      --abitrate BPS        bit rate (default: 128k)

    OUTPUT
      -o FILE|-|URL         where to write; '-' is stdout (a streamable container); a URL
                            (rtmp://host/app/KEY, srt://, tcp://, udp://) is pushed live, each
                            with its own queue, reconnecting after failures. Repeatable: one
                            encode feeds every output.
      -f asf|flv            container of the next -o (after the last -o: of that one);
                            default: from the file name (.asf/.wmv, .flv), FLV for URLs,
                            ASF for stdout; any other name needs -f
      --flv-hevc enhanced|codec12  how FLV carries HEVC: Enhanced RTMP (FourCC hvc1) or codec
                            id 12 (default: enhanced; ignored for H.264)
      --reconnect-delay S   first wait before reconnecting a failed URL output (default: 0.5);
                            every wait is jittered by up to ±20%, so 0.5 is 0.4 to 0.6
      --reconnect-max-delay S  longest wait between attempts, doubling from the first (default: 10)
      --reconnect-attempts N   reconnect attempts in a row before a URL output is given up
                            (default: 10); the others go on, and the run then exits 1
      --output-queue N      chunks a URL output or HTTP viewer may lag before video is dropped
                            (default: 512)
      -y                    overwrite output files that exist
      -n                    never overwrite: refuse if an output file exists (also the
                            default without -y: livemux does not ask)
      -t SECONDS            stop after this much media (default: until SIGINT or SIGTERM)

    DISPLAY
      --stats FILE|-        write one JSON object a second (media time, frames in/out/dropped,
                            bit rates, queue depths, A/V offset, drift corrections, latency
                            p50/p95/p99, bytes per output) to FILE, or to stderr with -; the
                            last line ("final": true) covers the whole run. Each field names
                            its unit (media_time_s, latency_ms…): docs/stats.schema.json
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

    Serves the live stream over HTTP to any number of viewers from one encode:
      http://HOST:PORT/live.flv   and   http://HOST:PORT/live.asf
    A viewer joining mid-stream starts at the latest keyframe. -o outputs work as in record.

      --listen HOST:PORT    address to listen on (default: 127.0.0.1:8080). HOST is an IPv4
                            address, [IPv6] such as [::1], or localhost (127.0.0.1); a bare
                            PORT (8080 or :8080) means 127.0.0.1; port 0 picks a free one.
                            Loopback unless told otherwise: 0.0.0.0:8080 or [::]:8080 let other
                            machines watch (with a warning). The viewer URLs are printed at start.

    """

    static func parse(_ arguments: [String], serving: Bool = false) throws -> RecordCommand {
        var cmd = RecordCommand()
        var c = RecordConfiguration()
        var reader = ArgumentReader(arguments)
        var videoOptions: [String: String] = [:]
        var audioOptions: [String: String] = [:]
        var videoSpec: String?, audioSpec: String?, inputSpec: String?
        var outputs: [(String, ContainerFormat?)] = []
        var pendingFormat: ContainerFormat?
        if serving { c.outputs.listen = ListenAddress(port: 8080) }
        while let opt = try reader.nextOption() {
            switch opt.name {
            case "--video": videoSpec = try reader.value(for: opt)
            case "--audio": audioSpec = try reader.value(for: opt)
            case "--input", "-i": inputSpec = try reader.value(for: opt)
            case "--video-opt":
                let (k, v) = try Values.keyValue(try reader.value(for: opt), option: opt.name)
                videoOptions[k] = v
            case "--audio-opt":
                let (k, v) = try Values.keyValue(try reader.value(for: opt), option: opt.name)
                audioOptions[k] = v
            case "--no-video": c.recordVideo = false
            case "--no-audio": c.recordAudio = false
            case "--no-realtime": c.realtime = false
            case "--realtime": c.realtime = true
            case "--vcodec", "-c:v": c.video.codec = try Values.choice(try reader.value(for: opt), option: opt.name, as: VideoCodec.self)
            case "--flv-hevc": c.outputs.flvHEVC = try Values.choice(try reader.value(for: opt), option: opt.name, as: FLVHEVCMode.self)
            case "--size", "-s":
                (c.video.width, c.video.height) = try Values.size(try reader.value(for: opt), option: opt.name)
            case "--fps", "-r": c.video.fps = try Values.frameRate(try reader.value(for: opt), option: opt.name)
            case "--vbitrate", "-b:v": c.video.bitRate = try Values.bitRate(try reader.value(for: opt), option: opt.name)
            case "--gop":
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
            case "--abitrate", "-b:a": c.audio.bitRate = try Values.bitRate(try reader.value(for: opt), option: opt.name)
            case "-f", "--format":
                // Like ffmpeg, -f names the container of the next -o.
                pendingFormat = try Values.choice(try reader.value(for: opt), option: opt.name, as: ContainerFormat.self)
            case "-o", "--output":
                let o = try reader.value(for: opt)
                guard !o.isEmpty else { throw UsageError("-o needs a file name or - for stdout") }
                outputs.append((o, pendingFormat))
                pendingFormat = nil
            case "-t", "--duration": c.duration = try Values.seconds(try reader.value(for: opt), option: opt.name)
            case "--stats":
                let path = try reader.value(for: opt)
                guard !path.isEmpty else { throw UsageError("--stats needs a file name, or - for stderr") }
                cmd.statsPath = path
            case "-y", "-n": cmd.overwrite = try OutputFiles.overwrite(opt.name, current: cmd.overwrite)
            case "-q", "--quiet": cmd.quiet = true
            case "-v", "--verbose": cmd.verbose = true
            case "--listen" where serving:
                let v = try reader.value(for: opt)
                guard let address = ListenAddress.parse(v) else {
                    throw UsageError("--listen takes [HOST:]PORT, such as 127.0.0.1:8080, localhost:8080, [::1]:8080 or 8080, not '\(v)'")
                }
                if !address.isLoopback {
                    cmd.warnings.append("--listen \(address.description) is not loopback: anyone who can reach this machine can watch (use 127.0.0.1 to keep it local)")
                }
                c.outputs.listen = address
            case "--reconnect-delay": c.outputs.reconnect.firstDelay = try Values.seconds(try reader.value(for: opt), option: opt.name)
            case "--reconnect-max-delay": c.outputs.reconnect.maxDelay = try Values.seconds(try reader.value(for: opt), option: opt.name)
            case "--reconnect-attempts": c.outputs.reconnect.attempts = try Values.integer(try reader.value(for: opt), option: opt.name, range: 0...1_000_000)
            case "--output-queue": c.outputs.queueCapacity = try Values.integer(try reader.value(for: opt), option: opt.name, range: 8...1_000_000)
            case "--queue-size": c.queueCapacity = try Values.integer(try reader.value(for: opt), option: opt.name, range: 1...100_000)
            default:
                throw UsageError("unknown option '\(opt.name)' for record (see livemux record --help)")
            }
        }
        guard !outputs.isEmpty || serving else { throw UsageError("no output: give -o FILE or -o - for stdout") }
        // A -f after the last -o names that output's container (`-o - -f flv`).
        if let f = pendingFormat, !outputs.isEmpty {
            guard outputs[outputs.count - 1].1 == nil else { throw UsageError("-f \(f.rawValue) after the last -o has no output to apply to") }
            outputs[outputs.count - 1].1 = f
        }
        if !c.recordVideo && !c.recordAudio { throw UsageError("--no-video and --no-audio together leave nothing to record") }
        if inputSpec != nil && (videoSpec != nil || audioSpec != nil) {
            throw UsageError("--input carries both streams: use it alone, or --video and --audio instead")
        }
        if let inputSpec {
            var spec = Capabilities.sourceSpec(inputSpec)
            spec.options = videoOptions.merging(audioOptions) { a, _ in a }
            c.input = spec
        }
        if let videoSpec {
            var spec = Capabilities.sourceSpec(videoSpec)
            spec.options = videoOptions
            c.videoSource = spec
        } else if !videoOptions.isEmpty && inputSpec == nil {
            throw UsageError("--video-opt applies to a --video or --input source; the built-in test source takes --size and --fps")
        }
        if let audioSpec {
            var spec = Capabilities.sourceSpec(audioSpec)
            spec.options = audioOptions
            c.audioSource = spec
        } else if !audioOptions.isEmpty && inputSpec == nil {
            throw UsageError("--audio-opt applies to an --audio or --input source; the built-in tone takes --sample-rate")
        }
        c.outputs.destinations = try outputs.map { (name, format) in
            let destination = Destination.parse(name)
            var fallback: ContainerFormat? = nil
            if case .network = destination { fallback = .flv }  // streamable, and what RTMP carries
            if destination == .standardOutput { fallback = .asf }
            let (f, warning) = try OutputFiles.container(of: name, given: format, fallback: fallback)
            if let warning, case .file = destination { cmd.warnings.append(warning) }
            return OutputSpec(destination: destination, format: f)
        }
        for o in c.outputs.destinations {
            if case .network(let url) = o.destination, url.lowercased().hasPrefix("rtmp"), o.format != .flv {
                throw UsageError("RTMP carries FLV only: drop -f \(o.format.rawValue) for \(o.destination.description)")
            }
        }
        try Self.checkFiles(c, overwrite: cmd.overwrite)
        c.outputs.overwriteFiles = cmd.overwrite == .always
        if c.outputs.destinations.filter({ $0.destination == .standardOutput }).count > 1 {
            throw UsageError("stdout can take only one output (-o - appears twice)")
        }
        cmd.configuration = c
        return cmd
    }

    /// Output files that cannot work: a directory, the input itself, one file named twice, one
    /// that exists without -y.
    static func checkFiles(_ c: RecordConfiguration, overwrite: OutputFiles.Overwrite) throws {
        func canonical(_ path: String) -> String {
            URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
        }
        let inputs = [c.input, c.videoSource, c.audioSource].compactMap { $0 }.filter { $0.format == nil }.map { canonical($0.url) }
        var seen = Set<String>()
        for o in c.outputs.destinations {
            guard case .file(let path) = o.destination else { continue }
            let key = canonical(path)
            if inputs.contains(key) { throw UsageError("-o \(path) is also the input: recording over it would destroy it; choose another file") }
            if !seen.insert(key).inserted { throw UsageError("two outputs write to \(path): give each -o its own file") }
            try OutputFiles.check(path, overwrite, format: o.format)
        }
    }
}
