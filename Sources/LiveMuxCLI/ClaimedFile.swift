import Foundation
import LiveMux
import POSIX

/// A file a command reads or one of its options writes (`-o`, `--stats`, `--segment-list`,
/// `--svg`), claimed while the options are checked: a name claimed twice, by any spelling or link,
/// is refused then, before anything is created, with both options in the error.
struct ClaimedFile {
    /// The option that writes it (`-o`, `--stats`); nil for an input, which is only read.
    let option: String?
    let path: String
    let identity: FileIdentity
    /// A segmented output's pattern (`-o 'seg%03d.flv'`), whose numbered names it writes too.
    let segments: SegmentName?
    /// The identity of the directory the file (or a dangling link's target) is in, for names a
    /// pattern makes there.
    let directory: FileIdentity

    /// - Parameter shown: the name the user gave, when it is not `path` (`-` for /dev/stdout).
    init(_ path: String, shown: String? = nil, option: String?, segmented: Bool = false) {
        self.option = option
        self.path = shown ?? path
        identity = FileIdentity(path)
        let target = FileIdentity.danglingTarget(of: path) ?? path
        let leaf = URL(fileURLWithPath: target).lastPathComponent
        segments = segmented ? SegmentName(leaf) : nil
        directory = FileIdentity(URL(fileURLWithPath: target).deletingLastPathComponent().path)
        self.leaf = leaf
    }

    /// The file's own name in its directory (a dangling link's: its target's).
    private let leaf: String

    /// Whether writing this and `other` would write one file: one identity, or a name in the
    /// directory of a numbered pattern that the pattern makes.
    func collides(with other: ClaimedFile) -> Bool {
        if identity == other.identity { return true }
        guard directory == other.directory else { return false }
        return segments?.number(of: other.leaf) != nil || other.segments?.number(of: leaf) != nil
    }

    /// What the user is told when `later` names this file too: both options and the fix.
    func refusal(of later: ClaimedFile) -> UsageError {
        guard let option else {
            return UsageError("\(later.option ?? "-o") \(later.path) is also the input: writing it would destroy the input; choose another file")
        }
        let laterOption = later.option ?? "-o"
        let fix = option == laterOption ? "give each \(option) its own file" : "give \(laterOption) a file of its own"
        if identity != later.identity, segments != nil || later.segments != nil {
            let (named, patterned) = segments == nil ? (self, later) : (later, self)
            return UsageError("\(named.option ?? "-o") \(named.path) is the name of a segment \(patterned.option ?? "-o") '\(patterned.path)' writes: \(fix)")
        }
        return UsageError("\(option) \(path) and \(laterOption) \(later.path) name the same file: \(fix)")
    }
}

extension [ClaimedFile] {
    /// Claims `path` for `option` (nil: an input, read twice at will); refused when a file claimed
    /// before is the same.
    mutating func claim(_ path: String, shown: String? = nil, option: String?, segmented: Bool = false) throws {
        let claim = ClaimedFile(path, shown: shown, option: option, segmented: segmented)
        if option != nil, let earlier = first(where: { $0.collides(with: claim) }) { throw earlier.refusal(of: claim) }
        append(claim)
    }
}
