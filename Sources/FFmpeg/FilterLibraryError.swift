import CFFmpeg

/// libavfilter could not be loaded, so no lavfi source is available.
struct FilterLibraryError: Error, CustomStringConvertible, Sendable {
    let reason: String
    var description: String {
        "cannot load \(String(cString: lm_avfilter_soname())) for lavfi sources (\(reason)): install it with apt-get install libavfilter\(LIBAVFILTER_VERSION_MAJOR)"
    }
}
