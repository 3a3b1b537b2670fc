import Foundation
import LiveMux
import POSIX

/// The output options `record`, `serve` and `mux` share, and the `Outputs` they make: `-o`
/// (repeatable: files, stdout, URLs), `-f` for the next `-o` (refused where it could be
/// misread), `-y`/`-n`, `--flv-hevc`, TLS verification, the
/// reconnect policy, the per-output queue and `--listen`.
struct OutputOptions {
    private var named: [(name: String, format: ContainerFormat?)] = []
    private var pendingFormat: ContainerFormat?
    /// The first viewer option given (`--viewer-key`, `--max-viewers` …): record takes them for
    /// its --http server, and without one they guard nothing.
    private var viewerOption: String?
    private var overwrite = OutputFiles.Overwrite.refuse
    private var tlsCAFileGiven = false
    private(set) var outputs = Outputs()
    private var segmentPolicy = SegmentPolicy()
    private var segmentList: String?
    /// The inputs and every file an option writes, claimed as they are checked: one file is never
    /// written by two options, nor written over an input.
    private var claims: [ClaimedFile] = [] {
        // The job checks outputs added while it runs against the same claims; it knows its
        // outputs (and which of them ended) itself.
        didSet { outputs.claimedFiles = claims.filter { $0.option != "-o" } }
    }
    /// Files read for their secrets (`--viewer-key-file`), never to be written over.
    private var keyFiles: [(path: String, option: String)] = []
    /// Set by `finish` when file outputs are cut into segments: says each one closed.
    private(set) var segmentAnnouncer: SegmentAnnouncer?
    /// Said once each before the job starts (unless -q): a name that disagrees with -f, a
    /// non-loopback --listen.
    private(set) var warnings: [String] = []

    static let help = """
      -o FILE|-|URL         where to write; '-' (or pipe:1) is stdout (a streamable container),
                            file:NAME the file NAME (as in ffmpeg); a URL
                            (rtmp://host/app/KEY, srt://, tcp://, udp://) is pushed live, each
                            with its own queue, reconnecting after failures. Repeatable: every
                            output gets the same streams. Kept out of ps: -o @FILE takes the
                            output from FILE's first line (not readable by other users), and
                            ${NAME} in a URL is the environment variable NAME:
                            -o 'rtmp://host/live/${STREAM_KEY}'
      -f asf|flv            container of the next -o: -f flv -o x; after the last -o, of
                            that one: -o - -f flv. Between two -o it must not read as the
                            previous one's: refused when that -o has no -f and its container is
                            open (stdout, a URL, a name without .asf/.flv), or when it disagrees
                            with the next name. Default: from the file name (.asf/.wmv, .flv),
                            FLV for URLs, ASF for stdout; any other name needs -f
      --flv-hevc enhanced|codec12  how FLV carries HEVC: Enhanced RTMP (FourCC hvc1) or codec
                            id 12 (default: enhanced; ignored for H.264)
      --reconnect-delay S   first wait before reconnecting a failed URL output (default: 0.5);
                            every wait is jittered by up to ±20%, so 0.5 is 0.4 to 0.6
      --reconnect-max-delay S  longest wait between attempts, doubling from the first (default: 10)
      --reconnect-attempts N   reconnect attempts in a row before a URL output is given up
                            (default: 10); the others go on, and the run then exits 1
      --output-queue N      chunks a URL output or HTTP viewer may lag before video is dropped
                            (default: 512)
      --max-latency S       seconds a URL output may fall behind real time (kernel buffers,
                            queue) before it skips to the newest keyframe, audio kept; each
                            episode warned once (default: 3)
      --tls-ca-file FILE    PEM file of the CAs that rtmps:// (and tls://, https://) servers'
                            certificates must lead to, instead of the system's
                            (default: /etc/ssl/certs/ca-certificates.crt); the host name in
                            the URL must be one the certificate names
      --tls-insecure        do not check TLS servers' certificates (warns): whoever answers at
                            the address gets the stream and its key
      --segment-time D      cut every file output into segments: a new file at the first
                            video keyframe D after the segment began (10, 90s, 10m, 1h,
                            01:30:00); the audio is cut at the same instant. Each segment is
                            a complete file whose timestamps start at 0. -o names them: %d or
                            %03d is their number (from 0): -o 'rec-%03d.asf'; or strftime
                            fields their start (local time), and then %d is the day, as in
                            ffmpeg's -strftime 1: -o 'rec-%Y%m%d-%H%M%S.asf'. Every file
                            output is cut; stdout, URLs and viewers are not. Without -y, a
                            numbered name that exists is refused at the start; a name taken
                            during the run gets the next free one (rec-002-1.asf), with a
                            warning
      --segment-size SIZE   also cut once a segment holds SIZE bytes (500M, 2G; k/M/G are
                            1024-based), at the next video keyframe
      --segment-at-clock    cut on wall-clock multiples of --segment-time (1h: on the hour,
                            local time), with a keyframe forced at the cut
      --segment-keep N      keep only the newest N segments: the oldest is deleted once a new
                            one is complete (a ring that never fills the disk), and at once
                            when the disk is full, so the recording goes on
      --segment-keep-timestamps  segments keep the running timeline instead of starting at 0
      --segment-start-number N  number the first segment N instead of 0 (%d), to go on after
                            the segments of an earlier run
      --segment-list FILE   append each closed segment to FILE in ffconcat form
                            (ffmpeg -f concat -i FILE plays them as one); with
                            --segment-keep it names just the segments kept. SIGUSR1 cuts
                            the current segments at the next keyframe (a forced one)
      -y                    overwrite output files that exist (and write through a link
                            that points to no file yet). Two options never write one file:
                            names that are the same file, by a link too, are refused
      -n                    never overwrite: refuse if an output file exists (also the
                            default without -y: livemux does not ask)
    """

    static let listenHelp = """
      --listen HOST:PORT    serve live viewers over HTTP (/live.flv, /live.asf; browsers:
                            /live.mp4 and HLS /live.m3u8, H.264 and AAC). HOST is an IPv4
                            address, [IPv6] such as [::1], or localhost (127.0.0.1); a bare
                            PORT (8080 or :8080) means 127.0.0.1; port 0 picks a free one.
                            Loopback unless told otherwise: 0.0.0.0:8080 or [::]:8080 let other
                            machines watch (with a warning). The viewer and dashboard URLs are
                            printed at start, with -q too (the port bound is no chatter);
                            / lists the streams, codecs and viewer counts (JSON: /?format=json);
                            a browser gets the dashboard there, which plays the stream
                            (also /stats, /events, /history, /snapshot.jpg: see --http in
                            record).
    """

    static let viewerHelp = """
      --max-viewers N       viewers served at once, both streams together (default: 1000);
                            past it a viewer gets 503. The open-file limit is raised to allow it.
      --viewer-key KEY      every request needs ?key=KEY, or a signed link ?expires=T&sig=HEX
                            (HEX: HMAC-SHA256 of the path followed by T, Unix seconds, under KEY);
                            else 403. The URLs printed at start carry the key (with -q: key=****)
      --viewer-key-file FILE  the viewer key from FILE's first line, kept out of ps (FILE must not
                            be readable by other users)
    """

    /// Takes `option` if it is an output option (`--listen` only when `listen` allows it);
    /// false when it is not one.
    mutating func take(_ option: (name: String, inline: String?), from reader: inout ArgumentReader, listen: Bool) throws -> Bool {
        switch option.name {
        case "-f", "--format":
            // Like ffmpeg, -f names the container of the next -o.
            let format = try Values.choice(try reader.value(for: option), option: option.name, as: ContainerFormat.self)
            if let earlier = pendingFormat {
                throw UsageError("-f \(earlier.rawValue) and -f \(format.rawValue) come one after the other, with no -o between: each -f names the container of the next -o; give one")
            }
            pendingFormat = format
        case "-o", "--output":
            let o = try SecretOutputArgument.resolve(try reader.value(for: option))
            guard !o.isEmpty, Destination.parse(o) != .file("") else { throw UsageError("-o needs a file name, - for stdout, or a URL") }
            if let f = pendingFormat, let previous = named.last, previous.format == nil {
                try OutputFiles.checkFormat(f, between: previous.name, and: o)
            }
            named.append((o, pendingFormat))
            pendingFormat = nil
        case "-y", "-n": overwrite = try OutputFiles.overwrite(option.name, current: overwrite)
        case "--flv-hevc": outputs.flvHEVC = try Values.choice(try reader.value(for: option), option: option.name, as: FLVHEVCMode.self)
        case "--reconnect-delay": outputs.reconnect.firstDelay = try Values.seconds(try reader.value(for: option), option: option.name)
        case "--reconnect-max-delay": outputs.reconnect.maxDelay = try Values.seconds(try reader.value(for: option), option: option.name)
        case "--reconnect-attempts":
            outputs.reconnect.attempts = try Values.integer(try reader.value(for: option), option: option.name, range: 0...1_000_000)
        case "--max-latency": outputs.maxLatency = try Values.seconds(try reader.value(for: option), option: option.name)
        case "--output-queue":
            outputs.queueCapacity = try Values.integer(try reader.value(for: option), option: option.name, range: 8...1_000_000)
        case "--tls-ca-file":
            let file = try reader.value(for: option)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue,
                  FileManager.default.isReadableFile(atPath: file) else {
                throw UsageError("--tls-ca-file \(file) is not a readable file: give the PEM file of the CA certificates to trust")
            }
            outputs.tls.caFile = file
            tlsCAFileGiven = true
        case "--tls-insecure":
            if !outputs.tls.insecure {
                warnings.append("--tls-insecure: TLS servers' certificates are not checked, so whoever answers at an output's address gets the stream and its key")
            }
            outputs.tls.insecure = true
        case "--segment-time": segmentPolicy.duration = try Values.duration(try reader.value(for: option), option: option.name)
        case "--segment-size": segmentPolicy.size = try Values.byteSize(try reader.value(for: option), option: option.name)
        case "--segment-at-clock": segmentPolicy.atClock = true
        case "--segment-keep":
            segmentPolicy.keep = try Values.integer(try reader.value(for: option), option: option.name, range: 1...1_000_000)
        case "--segment-keep-timestamps": segmentPolicy.keepTimestamps = true
        case "--segment-start-number":
            segmentPolicy.startNumber = try Values.integer(try reader.value(for: option), option: option.name, range: 0...999_999_999)
        case "--segment-list":
            let path = try reader.value(for: option)
            guard !path.isEmpty, Destination.parse(path) == .file(path) else { throw UsageError("--segment-list needs a file name") }
            segmentList = path
        case "--max-viewers":
            viewerOption = viewerOption ?? option.name
            outputs.maxViewers = try Values.integer(try reader.value(for: option), option: option.name, range: 1...1_000_000)
        case "--viewer-key", "--viewer-key-file":
            viewerOption = viewerOption ?? option.name
            let value = try reader.value(for: option)
            let key = option.name == "--viewer-key" ? value
                : try SecretFile.firstLine(of: value, option: "--viewer-key-file ", what: "the viewer key")
            if option.name == "--viewer-key-file" { keyFiles.append((value, option.name)) }
            guard let access = ViewerAccess(key: key) else {
                throw UsageError("\(option.name): a viewer key needs at least \(ViewerAccess.minimumKeyLength) characters (openssl rand -hex 16 makes a good one)")
            }
            outputs.viewerAccess = access
        case "--listen" where listen:
            outputs.listen = try address(option.name, try reader.value(for: option))
        case "--http" where !listen:
            // The dashboard alone: a push-only run can be watched, and nothing is streamed.
            outputs.listen = try address(option.name, try reader.value(for: option))
            outputs.servesViewers = false
        default:
            return false
        }
        return true
    }

    /// The address of `--listen` or `--http`, with a warning when it is not loopback.
    private mutating func address(_ option: String, _ v: String) throws -> ListenAddress {
        guard let address = ListenAddress.parse(v) else {
            throw UsageError("\(option) takes [HOST:]PORT, such as 127.0.0.1:8080, localhost:8080, [::1]:8080 or 8080, not '\(v)'")
        }
        if !address.isLoopback {
            warnings.append("\(option) \(address.description) is not loopback: anyone who can reach this machine can watch (use 127.0.0.1 to keep it local)")
        }
        return address
    }

    /// The `-o` given last so far: its index among them, and its name as given, secrets masked.
    var lastNamed: (index: Int, name: String)? {
        named.last.map { (named.count - 1, OutputFiles.shown($0.name)) }
    }

    /// Listens where `serve` does unless `--listen` says otherwise.
    mutating func listenByDefault() { outputs.listen = ListenAddress(port: 8080) }

    /// Whether an output is a URL or live viewers, which need packets at their own pace.
    var isLive: Bool {
        outputs.listen != nil || outputs.destinations.contains(where: \.destination.isNetwork)
    }

    /// Resolves every `-o` to its container and checks what cannot work before anything is
    /// created: an unknown container, RTMP without FLV or without an application and stream key,
    /// stdout twice, a directory, a file that is also an input (`inputs`: paths), one file named
    /// twice, one that exists without -y. `keyFiles`: files the job reads its secrets from
    /// (`--control-key-file`), which no output may write.
    mutating func finish(inputs: [String], keyFiles: [(path: String, option: String)] = []) throws {
        self.keyFiles += keyFiles
        guard !named.isEmpty || (outputs.listen != nil && outputs.servesViewers) else {
            throw UsageError("no output: give -o FILE, -o - for stdout, or a URL")
        }
        if let option = viewerOption, outputs.listen == nil {
            throw UsageError("\(option) is for an HTTP server, and there is none: give --http HOST:PORT (serve: --listen), whose page and /live.mp4 it then applies to")
        }
        if tlsCAFileGiven && outputs.tls.insecure {
            throw UsageError("--tls-ca-file and --tls-insecure contradict each other: give --tls-ca-file to check against a private CA, or --tls-insecure to not check")
        }
        // A -f after the last -o names that output's container (`-o - -f flv`).
        if let f = pendingFormat {
            guard !named.isEmpty, named[named.count - 1].format == nil else {
                throw UsageError("-f \(f.rawValue) after the last -o has no output to apply to")
            }
            named[named.count - 1].format = f
        }
        var warnings = self.warnings
        outputs.destinations = try named.map { (name, format) in
            let destination = Destination.parse(name)
            let (f, warning) = try OutputFiles.container(of: name, given: format, fallback: OutputFiles.defaultContainer(of: name))
            if let warning, case .file = destination { warnings.append(warning) }
            if case .network(let url) = destination, url.lowercased().hasPrefix("rtmp"), f != .flv {
                throw UsageError("RTMP carries FLV only: drop -f \(f.rawValue) for \(destination.description)")
            }
            if case .network(let url) = destination, let problem = rtmpURLProblem(url) ?? outputs.tls.problem(for: url) {
                throw UsageError(problem)
            }
            return OutputSpec(destination: destination, format: f)
        }
        self.warnings = warnings
        if outputs.destinations.filter({ $0.destination == .standardOutput }).count > 1 {
            throw UsageError("stdout can take only one output (-o - appears twice)")
        }
        try checkFiles(inputs: inputs)
        outputs.overwriteFiles = overwrite == .always
        try finishSegments()
    }

    /// Makes the segment plan when --segment-time or --segment-size asks for one; the other
    /// segment options alone would do nothing, so they are refused.
    private mutating func finishSegments() throws {
        guard segmentPolicy.duration != nil || segmentPolicy.size != nil else {
            guard segmentPolicy == SegmentPolicy(), segmentList == nil else {
                throw UsageError("the --segment-… options need --segment-time or --segment-size: they say where to cut")
            }
            return
        }
        if segmentPolicy.atClock && segmentPolicy.duration == nil {
            throw UsageError("--segment-at-clock needs --segment-time: the clock's period (1h: on the hour)")
        }
        guard !filePaths.isEmpty else {
            throw UsageError("segments are cut only from file outputs (stdout, URLs and viewers get one stream): add -o 'rec-%03d.asf'")
        }
        for path in filePaths where !SegmentName(path).hasFields {
            let url = URL(fileURLWithPath: path)
            let ext = url.pathExtension.isEmpty ? "asf" : url.pathExtension
            throw UsageError("-o \(path) names one file, but each segment needs a name of its own: number or date them,"
                             + " such as -o '\(url.deletingPathExtension().lastPathComponent)-%03d.\(ext)' or -o 'rec-%Y%m%d-%H%M%S.\(ext)'")
        }
        if let list = segmentList {
            try checkSideFile(list, option: "--segment-list", example: "segments.ffconcat")
            // One list played as one recording: two outputs' segments in it would play each moment twice.
            guard filePaths.count == 1 else {
                throw UsageError("--segment-list lists one output's segments, but \(filePaths.count) file outputs are cut: keep one file -o, or drop --segment-list")
            }
        }
        let announcer = SegmentAnnouncer(listPath: segmentList, keepsTimestamps: segmentPolicy.keepTimestamps, keep: segmentPolicy.keep)
        segmentAnnouncer = announcer
        outputs.segments = SegmentPlan(segmentPolicy, onClosed: { announcer.announce($0) }, onDeletedEarly: { announcer.deletedEarly($0) })
    }

    /// Claims the inputs, the key files and a stderr that is a file, then each output file
    /// (refused when it is one of those or claimed twice), and checks it exists only with -y.
    private mutating func checkFiles(inputs: [String]) throws {
        for input in inputs { try claims.claim(input, option: nil) }
        for (path, option) in keyFiles { try claims.claim(path, option: nil, reader: option) }
        // The job's own log (`2> job.log`) is written for as long as it runs.
        if (try? FileKind(path: Self.standardError)) == .regular {
            let shown = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/2")) ?? Self.standardError
            try claims.claim(Self.standardError, shown: shown, option: "2>")
        }
        let segmented = segmentPolicy.duration != nil || segmentPolicy.size != nil
        for o in outputs.destinations {
            // Two writers on stdout (`-o - --stats /dev/stdout`) would interleave into one stream.
            if o.destination == .standardOutput { try claims.claim("/dev/stdout", shown: "-", option: "-o") }
            guard case .file(let path) = o.destination else { continue }
            try claims.claim(path, option: "-o", segmented: segmented && SegmentName(path).isNumbered)
            if segmented {
                try OutputFiles.checkSegments(path, from: segmentPolicy.startNumber, overwrite, example: "out.\(o.format.rawValue)")
            } else {
                try OutputFiles.check(path, overwrite, example: "out.\(o.format.rawValue)")
            }
        }
    }

    private static let standardError = "/dev/stderr"

    /// The output files' paths, as given.
    var filePaths: [String] {
        outputs.destinations.compactMap { if case .file(let path) = $0.destination { return path } else { return nil } }
    }

    /// Checks a file another option writes (`--stats FILE`) by the output rules, after `finish`:
    /// not an input, not a file another option writes, refused if it exists unless -y.
    mutating func checkSideFile(_ path: String, option: String, example: String) throws {
        try OutputFiles.checkSideFile(path, option: option, overwrite, claims: &claims, example: example)
    }
}
