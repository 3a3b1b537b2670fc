import Foundation
import POSIX

/// A file a job reads or one of its options writes (`-o`, `--stats`, `--segment-list`, `--svg`,
/// a key file), claimed while the options are checked and again for every output added while
/// the job runs: a name claimed twice, by any spelling or link, is refused before anything is
/// created, with both options in the message.
public struct ClaimedFile: Sendable {
    /// The option that writes it (`-o`, `--stats`); nil for a file only read.
    public let option: String?
    /// What reads it, when `option` is nil: nil for an input, else the option (`--control-key-file`).
    public let reader: String?
    public let path: String
    /// The path as opened (`path` is as shown), to know the file again once it exists.
    private let opened: String
    let identity: FileIdentity
    /// A segmented output's pattern (`-o 'seg%03d.flv'`), whose numbered names it writes too.
    let segments: SegmentName?
    /// The identity of the directory the file (or a dangling link's target) is in, for names a
    /// pattern makes there.
    let directory: FileIdentity
    /// The file's own name in its directory (a dangling link's: its target's).
    private let leaf: String

    /// - Parameters:
    ///   - shown: the name the user gave, when it is not `path` (`-` for /dev/stdout).
    ///   - segmented: `path` is a numbered segment pattern the job cuts into files.
    public init(_ path: String, shown: String? = nil, option: String?, reader: String? = nil, segmented: Bool = false) {
        self.option = option
        self.reader = reader
        self.path = shown ?? path
        opened = path
        identity = FileIdentity(path)
        let target = FileIdentity.danglingTarget(of: path) ?? path
        leaf = URL(fileURLWithPath: target).lastPathComponent
        segments = segmented ? SegmentName(leaf) : nil
        directory = FileIdentity(URL(fileURLWithPath: target).deletingLastPathComponent().path)
    }

    /// The same claim, its identity read again: a file claimed before it was created (`--stats`)
    /// has an inode now, where its claim had only its path.
    public var renewed: ClaimedFile {
        ClaimedFile(opened, shown: path, option: option, reader: reader, segmented: segments != nil)
    }

    /// Whether writing this and `other` would write one file: one identity, or a name in the
    /// directory of a numbered pattern that the pattern makes.
    func collides(with other: ClaimedFile) -> Bool {
        if identity == other.identity { return true }
        guard directory == other.directory else { return false }
        return segments?.number(of: other.leaf) != nil || other.segments?.number(of: leaf) != nil
    }

    /// What the user is told when `later` names this file too: both options and the fix.
    func refusal(of later: ClaimedFile) -> String {
        let laterOption = later.option ?? "-o"
        guard let option else {
            guard let reader else {
                return "\(laterOption) \(later.path) is also the input: writing it would destroy the input; choose another file"
            }
            return "\(laterOption) \(later.path) is the file \(reader) reads: writing it would destroy it; choose another file"
        }
        let fix = option == laterOption ? "give each \(option) its own file" : "give \(laterOption) a file of its own"
        if identity != later.identity, segments != nil || later.segments != nil {
            let (named, patterned) = segments == nil ? (self, later) : (later, self)
            return "\(named.option ?? "-o") \(named.path) is the name of a segment \(patterned.option ?? "-o") '\(patterned.path)' writes: \(fix)"
        }
        return "\(option) \(path) and \(laterOption) \(later.path) name the same file: \(fix)"
    }
}

extension [ClaimedFile] {
    /// Why `claim` may not be written: the message naming the first file claimed before that is
    /// the same (or one of its segments); nil when it is free. A file only read is never refused.
    public func refusal(of claim: ClaimedFile) -> String? {
        guard claim.option != nil, let earlier = first(where: { $0.collides(with: claim) }) else { return nil }
        return earlier.refusal(of: claim)
    }
}
