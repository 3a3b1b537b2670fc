import Foundation
import FFmpeg

/// What `livemux devices` lists: per backend, the sources a user can give as `FORMAT:NAME`.
/// pulse, alsa and v4l2 through libavdevice's `avdevice_list_input_sources`; X displays, which
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
        case "pulse", "alsa":
            return listed(format, "--audio")
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

    /// What an error about a device that cannot be opened adds: what its backend does offer, so
    /// a mistyped name is fixed without a second command. Empty for a format that is no device.
    static func offer(_ format: String?) -> String {
        guard let format, let backend = backend(format) else { return "" }
        let names = backend.sources.map(\.name)
        if names.isEmpty {
            return "; \(format) finds no device" + (backend.problem.map { " (\($0))" } ?? "")
        }
        let more = names.count > namesInAnError ? ", …" : ""
        return "; \(format) offers \(names.prefix(namesInAnError).joined(separator: ", "))\(more) (`livemux devices` lists them)"
    }

    private static func listed(_ format: String, _ option: String) -> Backend {
        var backend = Backend(format: format, option: option)
        do {
            backend.sources = try DeviceSources.list(format: format)
        } catch let error as FFmpegError {
            backend.problem = error.message
        } catch {
            backend.problem = String(describing: error)
        }
        return backend
    }
}
