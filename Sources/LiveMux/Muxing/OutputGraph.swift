import POSIX

/// Which container writers a session needs and what each one feeds: one writer per container and
/// kind of destination — a file's muxer seeks back to finish its header, a stream's (stdout, URLs,
/// live viewers, a pipe or FIFO by name, the `Muxer`'s own sinks unless it says they seek) does
/// not. A plain value, so the grouping is unit-tested without a thread, a socket or a file. A file
/// cut into segments has a writer of its own, since its cuts restart the muxer.
struct OutputGraph: Equatable {
    struct Writer: Equatable {
        let format: ContainerFormat
        let seekable: Bool
        /// Indices into `Outputs.destinations`, in the order given.
        var destinations: [Int] = []
        /// Feeds the live viewers of this container (`/live.flv`, `/live.asf`).
        var viewers = false
        /// Feeds the caller's own sinks (`Muxer`).
        var callerSinks = false
        /// Cuts its one file into segments, each from a fresh muxer (`Segmenter`).
        var segmented = false
    }

    /// The first writer's packets measure capture → bytes latency: the writer of the first output
    /// given, else the caller's sinks, else the viewers'.
    private(set) var writers: [Writer] = []

    /// - Parameters:
    ///   - callerSinks: the container of the caller's own sinks and whether they seek.
    ///   - fileSeeks: whether a file output's name can be seeked back in (`seeks(path:)`).
    init(_ outputs: Outputs, callerSinks: (format: ContainerFormat, seekable: Bool)? = nil,
         fileSeeks: (String) -> Bool = OutputGraph.seeks(path:)) {
        for (i, spec) in outputs.destinations.enumerated() {
            guard case .file(let path) = spec.destination else {
                writers[index(spec.format, false)].destinations.append(i)
                continue
            }
            // A segment name is a pattern, not a file there yet: each segment is a new regular file.
            if outputs.segments != nil {
                writers.append(Writer(format: spec.format, seekable: true, destinations: [i], segmented: true))
                continue
            }
            // A job whose outputs may be removed one by one gives each file its own muxer, whose
            // trailer then completes that file alone.
            if outputs.filesApart && fileSeeks(path) {
                writers.append(Writer(format: spec.format, seekable: true, destinations: [i]))
                continue
            }
            writers[index(spec.format, fileSeeks(path))].destinations.append(i)
        }
        if let c = callerSinks { writers[index(c.format, c.seekable)].callerSinks = true }
        if outputs.listen != nil && outputs.servesViewers {
            for format in ContainerFormat.allCases { writers[index(format, false)].viewers = true }
        }
    }

    /// Whether what `path` names can be seeked back in: a pipe, FIFO, socket or character device
    /// behind any name (`/dev/stdout`, a FIFO) is a stream, as `-` is. A name with nothing behind it
    /// yet (or that cannot be looked at: its creation will say why) becomes a regular file.
    static func seeks(path: String) -> Bool { (try? FileKind(path: path))?.seeks ?? true }

    /// The writer for `format` and `seekable`, added if there is none yet.
    private mutating func index(_ format: ContainerFormat, _ seekable: Bool) -> Int {
        if let i = writers.firstIndex(where: { $0.format == format && $0.seekable == seekable && !$0.segmented }) { return i }
        writers.append(Writer(format: format, seekable: seekable))
        return writers.count - 1
    }
}
