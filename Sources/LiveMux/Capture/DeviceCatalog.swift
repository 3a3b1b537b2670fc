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

    public static func list() -> [Backend] {
        var backends: [Backend] = []
        for (format, option) in [("pulse", "--audio"), ("alsa", "--audio")] {
            backends.append(listed(format, option))
        }
        var x = Backend(format: "x11grab", option: "--video")
        let sockets = (try? FileManager.default.contentsOfDirectory(atPath: xSockets)) ?? []
        x.sources = sockets.filter { $0.hasPrefix("X") && Int($0.dropFirst()) != nil }
            .sorted { Int($0.dropFirst())! < Int($1.dropFirst())! }
            .map { DeviceSources.Source(name: ":\($0.dropFirst())", description: "X display", isDefault: false) }
        backends.append(x)
        var v4l2 = listed("v4l2", "--video")
        if v4l2.problem != nil || v4l2.sources.isEmpty {
            let nodes = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("video") }.sorted()
            if !nodes.isEmpty {
                v4l2.sources = nodes.map { DeviceSources.Source(name: "/dev/\($0)", description: "video device node", isDefault: false) }
            }
        }
        backends.append(v4l2)
        return backends
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
