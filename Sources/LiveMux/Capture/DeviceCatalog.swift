import Foundation
import FFmpeg

/// What `livemux devices` lists: per backend, the sources a user can give as `FORMAT:NAME`.
/// pulse, alsa and v4l2 through libavdevice's `avdevice_list_input_sources` (alsa's only those
/// ALSA opens for capture, pulse's problem said plainly); X displays, which
/// x11grab cannot list, from the X servers' sockets (`/tmp/.X11-unix/X<n>`); cameras also from
/// `/dev/video*` when libavdevice's list fails.
public enum DeviceCatalog {
    public struct Backend: Sendable {
        /// The format (`pulse`, `alsa`, `x11grab`, `v4l2`) and which option takes it.
        public let format: String, option: String
        public var sources: [DeviceSources.Source] = []
        /// Why nothing could be listed (no daemon, no library); nil when listing worked.
        public var problem: String?
    }

    static let xSockets = "/tmp/.X11-unix"

    static let formats = ["pulse", "alsa", "x11grab", "v4l2"]
    /// How many names an error lists before it points at `livemux devices`.
    static let namesInAnError = 6

    public static func list() -> [Backend] { formats.compactMap(backend) }

    /// One backend's devices; nil for a format that is no capture device.
    static func backend(_ format: String) -> Backend? {
        switch format {
        case "pulse":
            // libavdevice says only "Generic error in an external library" when it cannot connect.
            return listed(format, "--audio") { _ in
                let server = ProcessInfo.processInfo.environment["PULSE_SERVER"].map { " at \($0)" } ?? ""
                return "PulseAudio is not running or not reachable\(server) (start it, or set PULSE_SERVER)"
            }
        case "alsa":
            var alsa = listed(format, "--audio")
            alsa.sources = alsa.sources.filter { DeviceSources.alsaCanCapture($0.name) }
            return alsa
        case "x11grab":
            var x = Backend(format: format, option: "--video")
            let sockets = (try? FileManager.default.contentsOfDirectory(atPath: xSockets)) ?? []
            x.sources = sockets.filter { $0.hasPrefix("X") && Int($0.dropFirst()) != nil }
                .sorted { Int($0.dropFirst())! < Int($1.dropFirst())! }
                .map { DeviceSources.Source(name: ":\($0.dropFirst())", description: "X display", isDefault: false) }
            return x
        case "v4l2", "video4linux2":
            var v4l2 = listed("v4l2", "--video")
            if v4l2.problem != nil || v4l2.sources.isEmpty {
                let nodes = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("video") }.sorted()
                if !nodes.isEmpty {
                    v4l2.sources = nodes.map { DeviceSources.Source(name: "/dev/\($0)", description: "video device node", isDefault: false) }
                }
            }
            return v4l2
        default:
            return nil
        }
    }

    /// What an error about a device that cannot be opened adds. A device its backend lists is
    /// there, so the options were refused (x11grab: a size larger than the screen, named with the
    /// screen's); else what the backend does offer, so a mistyped name is fixed without a second
    /// command. Empty for a format that is no device.
    static func hint(for spec: SourceSpec) -> String {
        guard let format = spec.format, let backend = backend(format) else { return "" }
        let names = backend.sources.map(\.name)
        let device = format == "x11grab" ? display(of: spec.url) : spec.url
        if names.contains(device) {
            if format == "x11grab", let asked = spec.options["video_size"], let screen = screenSize(device),
               let size = Self.size(asked), size.width > screen.width || size.height > screen.height {
                return "; video_size=\(asked) is larger than the screen of \(device), \(screen.width)x\(screen.height)"
                    + " (give a size within it, or no video_size for the whole screen)"
            }
            guard !spec.options.isEmpty else { return "; \(format) lists \(device), but it could not be opened" }
            let given = spec.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "; \(format) lists \(device), so it refused an option (\(given)): see ffmpeg -h demuxer=\(format)"
        }
        if names.isEmpty {
            return "; \(format) finds no device" + (backend.problem.map { " (\($0))" } ?? "")
        }
        let more = names.count > namesInAnError ? ", …" : ""
        return "; \(format) offers \(names.prefix(namesInAnError).joined(separator: ", "))\(more) (`livemux devices` lists them)"
    }

    /// An x11grab URL's display as `livemux devices` lists it: `:1` for `:1.0+10,20`.
    static func display(of url: String) -> String {
        var name = url.prefix { $0 != "+" }
        if let dot = name.lastIndex(of: "."), name[..<dot].contains(":") { name = name[..<dot] }
        return String(name)
    }

    /// The size of an X display's screen: what x11grab grabs when given no size.
    private static func screenSize(_ display: String) -> (width: Int, height: Int)? {
        guard let screen = try? InputDevice(format: "x11grab", url: display, options: []),
              let video = screen.bestStream(.video) else { return nil }
        return (video.parameters.width, video.parameters.height)
    }

    /// `WxH`, as video_size takes it (its abbreviations, such as hd720, are not looked at).
    private static func size(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        return (w, h)
    }

    /// A backend's list through libavdevice; `explain` says what its failure means.
    private static func listed(_ format: String, _ option: String, explain: (FFmpegError) -> String = \.message) -> Backend {
        var backend = Backend(format: format, option: option)
        do {
            backend.sources = try DeviceSources.list(format: format)
        } catch let error as FFmpegError {
            backend.problem = explain(error)
        } catch {
            backend.problem = String(describing: error)
        }
        return backend
    }
}
