import LiveMux

/// The encode options that belong to one output when they follow its `-o` and to the recording
/// when they come before any `-o`: `--vcodec`, `--size`, `--fps`, `--vbitrate`, `--abitrate`.
/// Each is taken once in each place: a second would silently replace the first.
struct EncodingOptions {
    /// What each output asks for, by its index among the `-o` given.
    private(set) var perOutput: [Int: OutputEncoding] = [:]
    /// The options taken so far, by their long name and the output they belong to (nil: the recording).
    private var taken: [(name: String, output: Int?)] = []

    static let help = """
      Placed after an -o, --vcodec, --size, --fps, --vbitrate and --abitrate apply to that
      output alone (before any -o they are every output's): -o rec.flv -o rtmp://host/live/KEY
      --vbitrate 800k --size 854x480. Outputs asking the same share one encode; each other
      setting is an encode of its own (live viewers take the recording's). Each option is
      given once per place.
    """

    /// Takes `option` if it is an encode option, for the `-o` last given (`output`: its index and
    /// name; nil before any) or else for the recording (`c`); false when it is not one.
    mutating func take(_ option: (name: String, inline: String?), from reader: inout ArgumentReader,
                       output: (index: Int, name: String)?, into c: inout RecordConfiguration) throws -> Bool {
        let name: String
        switch option.name {
        case "--vcodec", "-c:v": name = "--vcodec"
        case "--size", "-s": name = "--size"
        case "--fps", "-r": name = "--fps"
        case "--vbitrate", "-b:v": name = "--vbitrate"
        case "--abitrate", "-b:a": name = "--abitrate"
        default: return false
        }
        if taken.contains(where: { $0.name == name && $0.output == output?.index }) {
            let place = output.map { "for -o \($0.name)" } ?? "before the first -o"
            throw UsageError("\(name) is given twice \(place): give it once (after an -o it is that output's, before any -o every output's)")
        }
        taken.append((name, output?.index))
        let value = try reader.value(for: option)
        var e = output.map { perOutput[$0.index] ?? OutputEncoding() } ?? OutputEncoding()
        switch name {
        case "--vcodec": e.videoCodec = try Values.choice(value, option: option.name, as: VideoCodec.self)
        case "--size": (e.width, e.height) = try Values.size(value, option: option.name)
        case "--fps": e.fps = try Values.frameRate(value, option: option.name)
        case "--vbitrate": e.videoBitRate = try Values.bitRate(value, option: option.name)
        default: e.audioBitRate = try Values.bitRate(value, option: option.name)
        }
        if let output {
            perOutput[output.index] = e
        } else {
            c.video = e.applied(to: c.video)
            c.audio = e.applied(to: c.audio)
        }
        return true
    }

    /// Gives each output what it asked for (after `OutputOptions.finish`, which made them).
    func apply(to outputs: inout Outputs) {
        for (i, e) in perOutput where i < outputs.destinations.count { outputs.destinations[i].encoding = e }
    }
}
