import LiveMux

/// The encode options that can differ between outputs: `--vcodec`, `--size`, `--fps`,
/// `--vbitrate`, `--abitrate`. As in ffmpeg, an output's come before its `-o`; before the first
/// `-o` they are every output's, after the last `-o` the last one's. Between two `-o` an option
/// could also be read as the earlier one's (as livemux once did), so it is taken for the next
/// only when the earlier has its own, and refused otherwise, never read silently the other way.
/// Each is taken once for each output and once before any.
struct EncodingOptions {
    /// What each output asks for, by its index among the `-o` given.
    private(set) var perOutput: [Int: OutputEncoding] = [:]
    /// The options each output has of its own, by long name; the first output's include those
    /// given before any `-o` (before one, they are all it has).
    private var own: [Int: Set<String>] = [:]
    /// Options given since the last `-o` (its index and name as messages say it), as given.
    private var pending: [(name: String, given: String, value: String)] = []
    private var previous: (index: Int, name: String)?

    static let help = """
      --vcodec, --size, --fps, --vbitrate and --abitrate before an -o are that output's, as in
      ffmpeg: --vbitrate 2M -o rec.flv --vbitrate 800k -o rtmp://host/live/KEY --size 854x480.
      Before the first -o they are every output's; after the last -o, the last one's. Between two
      -o they are the next one's when the one before has its own, and refused otherwise. Outputs
      asking the same share one encode; each other setting is an encode of its own (live viewers
      take the recording's). Each option is given once per output.
    """

    /// Takes `option` if it is an encode option (false when it is not one): before any `-o` for
    /// every output (`c`), after one until the next `-o` or the end (`outputGiven`, `finish`).
    mutating func take(_ option: (name: String, inline: String?), from reader: inout ArgumentReader,
                       into c: inout RecordConfiguration) throws -> Bool {
        guard let name = Self.longName(option.name) else { return false }
        let value = try reader.value(for: option)
        var checked = OutputEncoding()
        try Self.set(name, value, given: option.name, in: &checked)
        guard previous != nil else {
            // Before any -o: every output's, checked here and kept in the recording's settings.
            guard own[0, default: []].insert(name).inserted else {
                throw UsageError("\(name) is given twice before the first -o: give it once (there it is every output's)")
            }
            c.video = checked.applied(to: c.video)
            c.audio = checked.applied(to: c.audio)
            return true
        }
        if let after = previous, pending.contains(where: { $0.name == name }) {
            throw UsageError("\(name) is given twice after -o \(after.name): give it once (before an -o it is that output's)")
        }
        pending.append((name, option.name, value))
        return true
    }

    /// An `-o` was given (`next`): the options since the one before are its own when that one has
    /// its own of each; an option it has not could be meant for either, and is refused.
    mutating func outputGiven(_ next: (index: Int, name: String)) throws {
        defer { previous = next }
        guard let before = previous else { return }
        for p in pending {
            guard own[before.index, default: []].contains(p.name) else {
                throw Self.eitherWay(p, before: before.name, next: next.name, first: before.index == 0)
            }
            try take(p, for: next.index)
        }
        pending = []
    }

    /// After the options: those after the last `-o` are its own.
    mutating func finish() throws {
        guard let last = previous else { return }
        for p in pending {
            guard !own[last.index, default: []].contains(p.name) else {
                let earlier = last.index == 0 ? "before it (every output's)" : "before it"
                throw UsageError("\(p.name) is given \(earlier) and after the last -o \(last.name): give it once, before -o \(last.name)")
            }
            try take(p, for: last.index)
        }
        pending = []
    }

    /// Gives each output what it asked for (after `OutputOptions.finish`, which made them).
    func apply(to outputs: inout Outputs) {
        for (i, e) in perOutput where i < outputs.destinations.count { outputs.destinations[i].encoding = e }
    }

    private mutating func take(_ p: (name: String, given: String, value: String), for output: Int) throws {
        own[output, default: []].insert(p.name)
        try Self.set(p.name, p.value, given: p.given, in: &perOutput[output, default: OutputEncoding()])
    }

    /// The refusal of an option between two `-o` that the one before has none of, with both ways to write it.
    private static func eitherWay(_ p: (name: String, given: String, value: String), before: String, next: String, first: Bool) -> UsageError {
        let option = "\(p.given) \(p.value)", other = "\(p.given) \(placeholder(p.name))"
        let lead = first ? "" : "… "
        return UsageError("\(option) between -o \(before) and -o \(next) could be meant for \(before) or for \(next):"
                          + " an output's encode options come before its -o, as in ffmpeg."
                          + " For \(next) give \(before) its own first: \(lead)\(other) -o \(before) \(option) -o \(next);"
                          + " for \(before) write \(lead)\(option) -o \(before) \(other) -o \(next)")
    }

    private static func placeholder(_ name: String) -> String {
        switch name {
        case "--vcodec": "CODEC"
        case "--size": "WxH"
        case "--fps": "FPS"
        default: "RATE"
        }
    }

    private static func longName(_ given: String) -> String? {
        switch given {
        case "--vcodec", "-c:v": "--vcodec"
        case "--size", "-s": "--size"
        case "--fps", "-r": "--fps"
        case "--vbitrate", "-b:v": "--vbitrate"
        case "--abitrate", "-b:a": "--abitrate"
        default: nil
        }
    }

    private static func set(_ name: String, _ value: String, given: String, in e: inout OutputEncoding) throws {
        switch name {
        case "--vcodec": e.videoCodec = try Values.choice(value, option: given, as: VideoCodec.self)
        case "--size": (e.width, e.height) = try Values.size(value, option: given)
        case "--fps": e.fps = try Values.frameRate(value, option: given)
        case "--vbitrate": e.videoBitRate = try Values.bitRate(value, option: given)
        default: e.audioBitRate = try Values.bitRate(value, option: given)
        }
    }
}
