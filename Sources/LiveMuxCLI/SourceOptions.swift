import Foundation
import LiveMux

/// The source options of `record` and `serve`, and the sources they make: `--video` and `--audio`
/// (repeatable, numbered v0, v1 … and a0, a1 … in the order given, after `--input`'s streams),
/// `--input`, `--video-opt`/`--audio-opt` (for the source they follow), and how several sources
/// become one stream: `--volume`, `--mute`, `--layout`, `--vf`, `--af`, `--filter-complex`.
struct SourceOptions {
    private enum Role { case video, audio, input }
    private var given: [(role: Role, text: String, options: [String: String])] = []
    /// Options given before any source of their kind: for the first one given after them.
    private var early: [Role: [String: String]] = [:]
    private var gains: [(label: String, gain: Double, option: String)] = []
    private(set) var composition = Composition()
    /// `--layout` as given: a graph that makes `[vout]` places the sources itself.
    private var layoutGiven: String?

    static let help = """
      --video SPEC          a video source (default: lavfi:testsrc2 at --size and --fps);
                            repeat it for more: the second goes over the first (--layout)
      --audio SPEC          an audio source (default: lavfi:sine, 440 Hz at --sample-rate);
                            repeat it for more: they are mixed into the one track
      --input SPEC          one input carrying both streams, e.g.
                            'lavfi:avsynctest=size=640x360:framerate=30:samplerate=48000[out0][out1]';
                            - (or pipe:0) reads stdin: cat in.flv | livemux record --input - …
                            It is the first source of each kind (v0, a0); --video and --audio
                            add more
      --video-opt KEY=VAL   option for the video source it follows (video_size, framerate,
                            pixel_format…); before any, for the first
      --audio-opt KEY=VAL   option for the audio source it follows (sample_rate, channels…)
                            Sources are numbered in the order given: v0, v1 … and a0, a1 …
      --volume aN=GAIN      gain of audio source aN in the mix: 0.5, 2, or -6dB (default: 1,
                            each source at full level; a limiter keeps the sum from clipping)
      --mute aN             leave audio source aN out of the mix (its level still shows)
      --layout NAME         where video sources after the first go: pip (a quarter of the
                            width, bottom right; default), pip-top-left, pip-top-right,
                            pip-bottom-left, side-by-side, top-bottom
      --vf GRAPH            libavfilter chain before the video encoder, after the layout:
                            'eq=brightness=0.06:saturation=1.3,smartblur=1.5:-0.35:-3.5'
      --af GRAPH            libavfilter chain before the audio encoder, after the mix
      --filter-complex GRAPH  a graph whose inputs are the sources [v0] [v1] … [a0] …
                            and whose output is [vout] or [aout], in place of the layout or
                            the mix: '[v0][v1]hstack[vout]'; one per kind (not with --layout)
    """

    /// Takes `opt` if it is a source option.
    mutating func take(_ opt: (name: String, inline: String?), from reader: inout ArgumentReader) throws -> Bool {
        switch opt.name {
        case "--video": try add(.video, try reader.value(for: opt))
        case "--audio": try add(.audio, try reader.value(for: opt))
        case "--input", "-i":
            if given.contains(where: { $0.role == .input }) {
                throw UsageError("--input can be given once: add other sources with --video and --audio")
            }
            try add(.input, try reader.value(for: opt))
        case "--video-opt": try option(for: .video, try Values.keyValue(try reader.value(for: opt), option: opt.name))
        case "--audio-opt": try option(for: .audio, try Values.keyValue(try reader.value(for: opt), option: opt.name))
        case "--volume":
            let text = try reader.value(for: opt)
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let gain = Self.gain(parts[1]) else {
                throw UsageError("--volume takes aN=GAIN, such as a1=0.5 or a1=-6dB, not '\(text)'")
            }
            gains.append((parts[0], gain, "--volume"))
        case "--mute": gains.append((try reader.value(for: opt), 0, "--mute"))
        case "--layout":
            let name = try reader.value(for: opt)
            composition.layout = try Values.choice(name, option: opt.name, as: VideoLayout.self)
            layoutGiven = name
        case "--vf": composition.videoFilter = try Self.graph(try reader.value(for: opt), opt.name)
        case "--af": composition.audioFilter = try Self.graph(try reader.value(for: opt), opt.name)
        case "--filter-complex", "-filter_complex":
            let graph = try Self.graph(try reader.value(for: opt), opt.name)
            let (video, audio) = (graph.contains("[vout]"), graph.contains("[aout]"))
            if video && audio { throw UsageError("--filter-complex makes [vout] or [aout], not both: give one graph for each kind") }
            if !video && !audio { throw UsageError("--filter-complex \(graph): the graph has no output [vout] or [aout]: label its output") }
            if (video ? composition.videoGraph : composition.audioGraph) != nil {
                throw UsageError("a second --filter-complex makes [\(video ? "vout" : "aout")]: give one graph per kind")
            }
            if video { composition.videoGraph = graph } else { composition.audioGraph = graph }
        default: return false
        }
        return true
    }

    private mutating func add(_ role: Role, _ text: String) throws {
        var options: [String: String] = [:]
        for kind in [Role.video, .audio] where role == kind || role == .input {
            if !given.contains(where: { $0.role == kind || $0.role == .input }) { options.merge(early.removeValue(forKey: kind) ?? [:]) { a, _ in a } }
        }
        given.append((role, text, options))
    }

    private mutating func option(for kind: Role, _ kv: (String, String)) throws {
        if let i = given.lastIndex(where: { $0.role == kind || $0.role == .input }) {
            given[i].options[kv.0] = kv.1
        } else {
            early[kind, default: [:]][kv.0] = kv.1
        }
    }

    private static func graph(_ text: String, _ option: String) throws -> String {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw UsageError("\(option) needs a filter graph, such as \(option == "--af" ? "volume=2" : "hflip")") }
        return text
    }

    /// A gain as a factor (0.5) or in decibels (-6dB); nil when it is neither or negative.
    static func gain(_ text: String) -> Double? {
        let lower = text.lowercased()
        if lower.hasSuffix("db"), let db = Double(lower.dropLast(2)), db.isFinite { return pow(10, db / 20) }
        guard let factor = Double(text), factor.isFinite, factor >= 0 else { return nil }
        return factor
    }

    /// Puts the sources and the composition into `c`, refusing what cannot work.
    func finish(into c: inout RecordConfiguration) throws {
        let videos = given.filter { $0.role == .video }, audios = given.filter { $0.role == .audio }
        let input = given.first { $0.role == .input }
        if !c.recordVideo, let v = videos.first { throw UsageError("--no-video records no video, so --video \(v.text) would be ignored: give one of them") }
        if !c.recordAudio, let a = audios.first { throw UsageError("--no-audio records no audio, so --audio \(a.text) would be ignored: give one of them") }
        if given.filter({ SourceSpec.isStandardInput($0.text) }).count > 1 {
            throw UsageError("only one source can read stdin: give one input with both streams as --input -")
        }
        if early[.video] != nil { throw UsageError("--video-opt applies to a --video or --input source; the built-in test source takes --size and --fps") }
        if early[.audio] != nil { throw UsageError("--audio-opt applies to an --audio or --input source; the built-in tone takes --sample-rate") }
        let spec = { (g: (role: Role, text: String, options: [String: String])) -> SourceSpec in
            var s = Capabilities.sourceSpec(g.text)
            s.options = g.options
            return s
        }
        c.input = input.map(spec)
        c.videoSources = videos.map(spec)
        c.audioSources = audios.map(spec)
        var composition = self.composition
        let audioCount = max(1, (input != nil ? 1 : 0) + audios.count)
        for g in gains {
            guard g.label.hasPrefix("a"), let n = Int(g.label.dropFirst()), n >= 0 else {
                throw UsageError("\(g.option) names an audio source as a0, a1 …, not '\(g.label)'")
            }
            guard c.recordAudio, n < audioCount else {
                throw UsageError("\(g.option) \(g.label): there \(audioCount == 1 ? "is one audio source, a0" : "are \(audioCount) audio sources, a0 to a\(audioCount - 1)")")
            }
            composition.gains[n] = g.gain
        }
        if composition.videoGraph != nil, let layout = layoutGiven {
            throw UsageError("--layout \(layout) and a --filter-complex that makes [vout] cannot both be given: the graph places the sources;"
                             + " drop --layout, or place them inside the graph (overlay, hstack)")
        }
        if composition.videoGraph != nil, composition.videoFilter != nil {
            throw UsageError("--vf and a --filter-complex that makes [vout] cannot both be given: put the filter inside the graph")
        }
        if composition.audioGraph != nil, composition.audioFilter != nil || !gains.isEmpty {
            throw UsageError("--af, --volume and --mute do not apply with a --filter-complex that makes [aout]: put them inside the graph")
        }
        if !c.recordVideo, composition.videoGraph != nil || composition.videoFilter != nil {
            throw UsageError("--no-video records no video, so a video filter would be ignored: give one of them")
        }
        if !c.recordAudio, composition.audioGraph != nil || composition.audioFilter != nil {
            throw UsageError("--no-audio records no audio, so an audio filter would be ignored: give one of them")
        }
        c.composition = composition
    }
}
