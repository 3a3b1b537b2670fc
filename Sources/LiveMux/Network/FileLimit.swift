#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open descriptors, which caps how many viewers can connect: a shell's
/// soft limit is often 1024 although the hard limit allows far more.
enum FileLimit {
    /// Raises the soft limit to the hard one; the limit now in force (nil when it cannot be read).
    static func raiseToHard() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is UInt.max: Int.max
    }
}
