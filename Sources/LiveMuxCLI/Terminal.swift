import Foundation
import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// Writes diagnostics to stderr (stdout may carry media).
enum Terminal {
    static let stderrIsTerminal = isatty(2) != 0

    static func write(_ text: String) {
        var t = text
        // A diagnostic that stderr cannot take has nowhere else to go: it is dropped.
        t.withUTF8 { buf in _ = try? syscall(where: "write") { Glibc.write(2, buf.baseAddress, buf.count) } }
    }

    static func error(_ message: String) { write("error: \(message)\n") }
    static func warning(_ message: String) { write("warning: \(message)\n") }
}
