import Foundation
import POSIX

/// A file holding one secret on its first line (`-o @FILE`, `--viewer-key-file`): read only when
/// other users of the machine cannot read it, since then it would keep nothing secret.
enum SecretFile {
    /// Permission bits that let other users read a file.
    private static let worldReadable: mode_t = 0o004

    /// The first line of `path`, without its line end and surrounding blanks; `option` names what
    /// asked for it in errors (`-o @`, `--viewer-key-file `), `what` what the line should hold.
    static func firstLine(of path: String, option: String, what: String) throws -> String {
        var info = stat()
        guard !path.isEmpty, (try? syscall(where: "stat") { stat(path, &info) }) != nil, (info.st_mode & S_IFMT) == S_IFREG,
              let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("\(option)\(path): no readable file \(path); it should hold \(what) on its first line")
        }
        if info.st_mode & worldReadable != 0 {
            throw UsageError("\(option)\(path): every user of this machine may read \(path), so it keeps nothing secret; chmod o-r \(path)")
        }
        let line = String(decoding: data, as: UTF8.self).split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? ""
        let text = line.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw UsageError("\(option)\(path): the first line of \(path) is empty; write \(what) there") }
        return text
    }
}
