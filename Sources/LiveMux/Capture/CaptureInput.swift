import Foundation
import FFmpeg

/// What a capture source reads, opened: libavformat (a device or a file) and a decoder per
/// wanted stream, or a lavfi graph read directly, whose frames need no decoding.
enum CaptureInput {
    case demuxer(InputDevice)
    case filterGraph(FilterGraph)

    /// A wanted stream (a demuxer's stream or a graph's output).
    struct Route {
        let kind: StreamKind
        let timeBase: Rational
        /// nil for a filter graph's output.
        let decoder: Decoder?
    }

    /// Opens `spec` with `options`; a failure is one message naming the input and the fix.
    static func open(_ spec: SourceSpec, options: [(String, String)]) throws -> CaptureInput {
        do {
            // The lavfi device's own options (graph_file, dumpgraph) still need the device.
            if spec.format == FilterGraph.formatName && spec.options.isEmpty {
                return .filterGraph(try FilterGraph(description: spec.url))
            }
            return .demuxer(try InputDevice(format: spec.format, url: spec.url, options: options))
        } catch let error as FFmpegError {
            let deviceHint = DeviceCatalog.hint(for: spec)
            let hint = deviceHint.isEmpty ? " (check the device or path; `FORMAT:URL` such as lavfi:testsrc2 or v4l2:/dev/video0)" : deviceHint
            throw ExplainedError("cannot open input '\(spec.description)': \(error.message)\(hint)", cause: error)
        } catch let error as InputDevice.UnknownOption {
            throw ExplainedError("input '\(spec.description)' has no option '\(error.key)' (--video-opt and --audio-opt take"
                                 + " the options of the device or demuxer: ffmpeg -h demuxer=\(spec.format ?? "NAME"))", cause: error)
        } catch let problem as FilterGraph.Problem {
            throw LiveMuxError.input("cannot use '\(spec.description)' as a source: \(problem)")
        }
    }

    /// The wanted streams by index (a decoder for each of a device's); throws if one is missing.
    func routes(_ kinds: [StreamKind], _ spec: SourceSpec) throws -> [Int: Route] {
        switch self {
        case .demuxer(let device):
            return try Self.routes(device, kinds, spec)
        case .filterGraph(let graph):
            var routes: [Int: Route] = [:]
            for kind in kinds {
                guard let output = graph.firstOutput(kind == .video ? .video : .audio) else { throw Self.missing(kind, spec) }
                routes[output.index] = Route(kind: kind, timeBase: output.timeBase, decoder: nil)
            }
            return routes
        }
    }

    /// A decoder for each wanted stream of a device, by stream index.
    static func routes(_ device: InputDevice, _ kinds: [StreamKind], _ spec: SourceSpec) throws -> [Int: Route] {
        var routes: [Int: Route] = [:]
        for kind in kinds {
            guard let stream = device.bestStream(kind == .video ? .video : .audio) else { throw missing(kind, spec) }
            routes[stream.index] = Route(kind: kind, timeBase: stream.timeBase,
                                         decoder: try Decoder(parameters: stream.parameters, timeBase: stream.timeBase))
        }
        return routes
    }

    private static func missing(_ kind: StreamKind, _ spec: SourceSpec) -> LiveMuxError {
        .input("input '\(spec.description)' has no \(kind.rawValue) stream (use --no-\(kind.rawValue) or give a --\(kind.rawValue) source)")
    }

    /// What the wanted streams (`routes`) say they deliver.
    func format(_ routes: [Int: Route]) -> SourceFormat {
        let chosen = { (kind: StreamKind) in routes.first { $0.value.kind == kind }?.key }
        switch self {
        case .demuxer(let d):
            return SourceFormat(video: chosen(.video).map { d.streams[$0] }, audio: chosen(.audio).map { d.streams[$0] }, device: d.isDevice)
        case .filterGraph(let g): return SourceFormat(video: chosen(.video).map { g.outputs[$0] }, audio: chosen(.audio).map { g.outputs[$0] })
        }
    }

    /// A camera, screen or microphone. lavfi is a libavdevice "device" too, but it makes frames
    /// as fast as it is asked.
    var isLive: Bool {
        guard case .demuxer(let device) = self else { return false }
        return device.isDevice && device.formatName != FilterGraph.formatName
    }

    /// A live video device's frame grid, when its video is wanted.
    static func grid(_ device: InputDevice, _ routes: [Int: Route]) -> FrameGrid? {
        guard let stream = device.bestStream(.video), routes[stream.index] != nil else { return nil }
        // Devices are not probed, so r_frame_rate is unset for most (x11grab): then avg_frame_rate.
        let rate = stream.baseFrameRate.doubleValue > 0 ? stream.baseFrameRate : stream.averageFrameRate
        return FrameGrid(framesPerSecond: rate.doubleValue, counting: device.formatName == "x11grab")
    }
}
