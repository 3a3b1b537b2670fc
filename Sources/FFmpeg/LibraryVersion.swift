import CFFmpeg

/// A libav* library's version as the process runs it (not the headers it was built with).
public struct LibraryVersion: Sendable, Equatable, CustomStringConvertible {
    public let name: String
    /// `AV_VERSION_INT`: major << 16 | minor << 8 | micro; 0 when the library cannot be loaded.
    public let packed: UInt32

    public var description: String {
        packed == 0 ? "\(name) not found" : "\(name) \(packed >> 16).\(packed >> 8 & 0xFF).\(packed & 0xFF)"
    }

    /// FFmpeg's release (`av_version_info`), such as 5.1.6-0+deb12u1.
    public static var release: String { String(cString: av_version_info()) }

    /// Every library LiveMux uses; libavdevice and libavfilter are loaded to ask them.
    public static var all: [LibraryVersion] {
        [LibraryVersion(name: "libavutil", packed: avutil_version()),
         LibraryVersion(name: "libavcodec", packed: avcodec_version()),
         LibraryVersion(name: "libavformat", packed: avformat_version()),
         LibraryVersion(name: "libavdevice", packed: lm_loaded_library_version(lm_avdevice_soname(), "avdevice_version")),
         LibraryVersion(name: "libavfilter", packed: lm_loaded_library_version(lm_avfilter_soname(), "avfilter_version")),
         LibraryVersion(name: "libswscale", packed: swscale_version()),
         LibraryVersion(name: "libswresample", packed: swresample_version())]
    }
}
