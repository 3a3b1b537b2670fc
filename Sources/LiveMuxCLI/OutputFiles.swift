import Foundation
import LiveMux

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
        let named = ContainerFormat.implied(by: name)
        if let given {
            let namedAs = named?.rawValue.uppercased() ?? (Destination.parse(name) == .standardOutput ? nil : otherContainers[ext])
            guard let namedAs, namedAs != given.rawValue.uppercased() else { return (given, nil) }
            return (given, "\(name) will hold \(given.rawValue.uppercased()), but its name says \(namedAs) (players may go by the name)")
        }
        if let format = named ?? fallback { return (format, nil) }
        if let other = otherContainers[ext] {
            throw UsageError("cannot write \(name): \(other) is not a container livemux writes; it writes \(written): rename it, or add -f asf or -f flv")
        }
        throw UsageError("cannot tell the container of '\(name)' from its name: livemux writes \(written); rename it, or add -f asf or -f flv")
    }

    /// Refuses a directory, and a regular file that exists unless `-y` (devices and FIFOs are
    /// written, not overwritten). Checked for every output before anything is created.
    static func check(_ path: String, _ policy: Overwrite, option: String = "-o", example: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        if isDirectory.boolValue {
            throw UsageError("\(option) \(path) is a directory: give a file name such as \(path)/\(example)")
        }
        guard policy != .always, isRegularFile(path) else { return }
        throw UsageError(policy == .never ? "\(path) exists (-n: not overwriting)" : "\(path) exists (add -y to overwrite)")
    }

    /// A file written beside the media (`--stats FILE`, `report --svg FILE`) follows the output
    /// rules too: never one of the inputs, never a file another option writes, and checked like an
    /// output (`check`) before anything is read or created.
    static func checkSideFile(_ path: String, option: String, _ policy: Overwrite, inputs: [String], others: [String],
                              example: String) throws {
        let key = canonical(path)
        if inputs.map(canonical).contains(key) {
            throw UsageError("\(option) \(path) is also the input: writing it would destroy the input; choose another file")
        }
        if others.map(canonical).contains(key) {
            throw UsageError("\(option) \(path) is also an output: give \(option) a file of its own")
        }
        try check(path, policy, option: option, example: example)
    }

    /// One spelling per file, so a file named two ways (`./a.flv`, a link to it) is seen as one.
    static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// `-y` or `-n` from the command line; both together are a mistake.
    static func overwrite(_ flag: String, current: Overwrite) throws -> Overwrite {
        let wanted: Overwrite = flag == "-y" ? .always : .never
        guard current == .refuse || current == wanted else { throw UsageError("-y and -n contradict each other: give one") }
        return wanted
    }
}
