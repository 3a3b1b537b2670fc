import CFFmpeg

/// libavdevice could not be loaded, so no capture device is available.
struct DeviceLibraryError: Error, CustomStringConvertible, Sendable {
    let reason: String
    var description: String {
        "cannot load \(String(cString: lm_avdevice_soname())) for capture devices (\(reason)): install it with apt-get install libavdevice\(LIBAVDEVICE_VERSION_MAJOR)"
    }
}
