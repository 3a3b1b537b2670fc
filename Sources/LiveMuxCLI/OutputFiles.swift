import Foundation
import LiveMux
import POSIX

/// What `record`, `serve` and `mux` share about their outputs: the container a name implies, a
/// warning when `-f` disagrees with the name, and ffmpeg's rule for files that already exist.
enum OutputFiles {
    /// `-y` overwrites, `-n` refuses, and without either livemux refuses too (it never asks).
    enum Overwrite: Equatable {
        case refuse, always, never
    }

    /// Containers other tools write that livemux does not, by extension: named in the error.
    private static let otherContainers: [String: String] = [
        "mp4": "MP4", "m4v": "MP4", "m4a": "MP4", "mov": "MOV", "mkv": "Matroska", "webm": "WebM",
        "ts": "MPEG-TS", "m2ts": "MPEG-TS", "avi": "AVI", "mpg": "MPEG-PS", "ogg": "Ogg", "3gp": "3GP",
    ]

    static let written = "ASF (.asf, .wmv) and FLV (.flv)"

    /// The container of output `name`: `-f` if given, else the name's, else `fallback` (stdout,
    /// URLs). With `-f`, a name that says another container gives a warning.
    static func container(of name: String, given: ContainerFormat?, fallback: ContainerFormat?)
        throws -> (format: ContainerFormat, warning: String?) {
        let ext = URL(fileURLWithPath: name).pathExtension.lowercased()
        if let given {
            guard let namedAs = containerNamed(by: name), namedAs != given.rawValue.uppercased() else { return (given, nil) }
            return (given, "\(name) will hold \(given.rawValue.uppercased()), but its name says \(namedAs) (players may go by the name)")
        }
        if let format = ContainerFormat.implied(by: name) ?? fallback { return (format, nil) }
        if let other = otherContainers[ext] {
            throw UsageError("cannot write \(name): \(other) is not a container livemux writes; it writes \(written): rename it, or add -f asf or -f flv")
        }
        throw UsageError("cannot tell the container of '\(name)' from its name: livemux writes \(written); rename it, or add -f asf or -f flv")
    }

    /// The container an output's name says, as its name (`ASF`, `FLV`, `MP4`); nil when it says none.
    private static func containerNamed(by name: String) -> String? {
        if let implied = ContainerFormat.implied(by: name) { return implied.rawValue.uppercased() }
        guard Destination.parse(name) != .standardOutput else { return nil }
        return otherContainers[URL(fileURLWithPath: name).pathExtension.lowercased()]
    }

    /// The container another tool writes that `name`'s extension says (`MP4`), nil for any other name.
    static func otherContainer(namedBy name: String) -> String? { otherContainers[URL(fileURLWithPath: name).pathExtension.lowercased()] }

    /// The container an output without `-f` gets: its name's, else stdout's and URLs' default.
    static func defaultContainer(of name: String) -> ContainerFormat? {
        if let implied = ContainerFormat.implied(by: name) { return implied }
        switch Destination.parse(name) {
        case .standardOutput: return .asf
        case .network: return .flv  // streamable, and what RTMP carries
        case .file: return nil
        }
    }

    /// Refuses an `-f` between two `-o` that could be misread (issue 32): ffmpeg gives it to the
    /// next `-o`, but after an `-o` with no `-f` of its own (`-o - -f flv -o x.asf`) it reads as
    /// that one's too, as `-o - -f flv` at the end does. Refused when it disagrees with the next
    /// name, or when the previous `-o`'s container is open to it (stdout, a URL, a name without
    /// .asf/.wmv/.flv; RTMP for FLV); the error gives both unmistakable ways to write it.
    static func checkFormat(_ format: ContainerFormat, between previous: String, and next: String) throws {
        let f = format.rawValue
        let nextSays = containerNamed(by: next).flatMap { $0 == f.uppercased() ? nil : $0 }
        guard nextSays != nil || couldTake(format, previous) else { return }
        let (a, b) = (Destination.parse(previous).description, Destination.parse(next).description)
        let (aOption, bOption) = (shown(previous), shown(next))
        let problem = nextSays.map { "would apply to \(b), the next -o, whose name says \($0)" } ?? "could be meant for \(a) or for \(b)"
        let own = defaultContainer(of: previous)?.rawValue ?? "asf|flv"
        throw UsageError("-f \(f) between -o \(aOption) and -o \(bOption) \(problem): -f names the container of the next -o."
                         + " For \(a) write -f \(f) -o \(aOption); for \(b) give \(a) its own -f first: -f \(own) -o \(aOption) -f \(f) -o \(bOption)")
    }

    /// Whether an output with no `-f` of its own could be the one an `-f` after it was meant
    /// for: its name does not fix its container (a URL's implied FLV is what -f flv says too).
    private static func couldTake(_ format: ContainerFormat, _ name: String) -> Bool {
        guard let implied = ContainerFormat.implied(by: name) else { return true }
        if case .network = Destination.parse(name) { return implied == format }
        return false
    }

    /// An output as it is given on the command line, its secrets masked.
    static func shown(_ name: String) -> String {
        if case .network(let url) = Destination.parse(name) { return maskedURL(url) }
        return name
    }

    /// Refuses a directory, and a regular file that exists unless `-y` (devices, FIFOs and the
    /// stdout the shell redirected are written, not overwritten). Checked for every output before
    /// anything is created.
    static func check(_ path: String, _ policy: Overwrite, option: String = "-o", example: String) throws {
        // Writing through a link that points to nothing creates a file elsewhere, under another
        // name: as much a surprise as overwriting, so it takes -y too.
        if policy != .always, let target = FileIdentity.danglingTarget(of: path) {
            throw UsageError(policy == .never ? "\(option) \(path) is a link to \(target), where no file is yet (-n: not writing through it): give the file it points to, or another name"
                                              : "\(option) \(path) is a link to \(target), where no file is yet: add -y to create it through the link, or give another name")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        if isDirectory.boolValue {
            throw UsageError("\(option) \(path) is a directory: give a file name such as \(path)/\(example)")
        }
        guard policy != .always, isRegularFile(path), !FileKind.isStandardOutput(path) else { return }
        throw UsageError(policy == .never ? "\(path) exists (-n: not overwriting)" : "\(path) exists (add -y to overwrite)")
    }

    /// Checks a segmented output (`-o 'p%03d.asf'`) before anything is created: its first name is
    /// not a directory, and without `-y` no regular file has a name the pattern will produce. For
    /// numbered names that is any number from `start` on, found by reading the directory (a ring
    /// restarted beside its segments finds p090…p099, not just p000); the error names the first
    /// and how to go on after the last. A dated name exists or not only when its segment begins:
    /// the recording then writes it under the next free name.
    static func checkSegments(_ pattern: String, from start: Int, _ policy: Overwrite, example: String) throws {
        let name = SegmentName(pattern)
        let first = name.path(index: start, wallClock: Int64(Date().timeIntervalSince1970 * 1e6))
        try check(first, .always, example: example)
        guard name.isNumbered, policy != .always else { return }
        let slash = pattern.lastIndex(of: "/")
        let directory = SegmentName(slash.map { String(pattern[..<$0]) } ?? "")
        // A number in the directory's name (`d%d/seg.asf`) has no one directory to read: the first
        // name is checked alone, and a later one that exists goes to the next free name.
        guard !directory.hasFields else { return try check(first, policy, example: example) }
        let leaf = SegmentName(slash.map { String(pattern[pattern.index(after: $0)...]) } ?? pattern)
        let listed = directory.pattern.isEmpty ? (slash == nil ? "." : "/") : directory.path(index: 0, wallClock: 0)
        // A directory that cannot be read holds no name to refuse: creating the first segment
        // then fails with the reason (no such directory, no permission).
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: listed)) ?? []
        let taken = entries.compactMap(leaf.number).filter { $0 >= start && isRegularFile(name.path(index: $0, wallClock: 0)) }
        guard let lowest = taken.min(), let highest = taken.max() else { return }
        let exists = name.path(index: lowest, wallClock: 0)
        let goOn = "--segment-start-number \(highest + 1) to number after the segments there, or give -o another name"
        if policy == .never {
            throw UsageError("\(exists) exists (-n: not overwriting), and -o \(pattern) would write segment \(lowest) there: give \(goOn)")
        }
        throw UsageError("\(exists) exists, and -o \(pattern) would write segment \(lowest) over it: add -y to overwrite, \(goOn)")
    }

    /// A file written beside the media (`--stats FILE`, `report --svg FILE`) follows the output
    /// rules too: never one of the inputs, never a file another option writes (`claims`, which it
    /// joins), and checked like an output (`check`) before anything is read or created.
    static func checkSideFile(_ path: String, option: String, _ policy: Overwrite, claims: inout [ClaimedFile],
                              example: String) throws {
        try claims.claim(path, option: option)
        try check(path, policy, option: option, example: example)
        // It is created only once everything else was built: a directory that cannot take it
        // must be found now, before anything is recorded.
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw UsageError("cannot create the \(option) file '\(path)': \(directory) is not a directory (create it first)")
        }
        guard (try? syscall(where: "access") { access(directory, W_OK) }) != nil else {
            throw UsageError("cannot create the \(option) file '\(path)': \(directory) is not writable (choose another directory)")
        }
    }

    private static func isRegularFile(_ path: String) -> Bool { (try? FileKind(path: path)) == .regular }

    /// `-y` or `-n` from the command line; both together are a mistake.
    static func overwrite(_ flag: String, current: Overwrite) throws -> Overwrite {
        let wanted: Overwrite = flag == "-y" ? .always : .never
        guard current == .refuse || current == wanted else { throw UsageError("-y and -n contradict each other: give one") }
        return wanted
    }
}
