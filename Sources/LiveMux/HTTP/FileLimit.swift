import POSIX
#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open descriptors, which caps how many viewers can connect: a shell's
/// soft limit is often 1024 although the hard limit allows far more.
enum FileLimit {
    /// Raises the soft limit to the hard one; the limit now in force (nil when it cannot be read).
    static func raiseToHard() -> Int? {
        var limit = rlimit()
        do {
            try syscall(where: "getrlimit") { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        } catch {
            return nil
        }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            // Refused, the soft limit stays in force: the caller warns from the limit returned.
            if (try? syscall(where: "setrlimit") { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) }) != nil { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is UInt.max: Int.max
    }
}
