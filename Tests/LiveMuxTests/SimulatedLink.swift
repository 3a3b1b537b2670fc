import POSIX
@testable import LiveMux

/// A live stream through a shaped link, in 20 ms steps, driving the real `LinkMonitor` and
/// `BitrateController` as `LinkWatcher` does. The encoder follows the target half a second late
/// (x264's VBV does, about) with a 2 s GOP whose keyframe is a quarter second of bit rate (the
/// VBV buffer); audio and container bytes go out evenly. The far side acknowledges bytes into a
/// receive buffer (a proxy's, a router's queue) that empties through a token bucket at the link
/// rate; a deep bucket lets a burst through at once after a quiet spell.
struct SimulatedLink {
    /// The link's bits per second at a time (s).
    var rate: (Double) -> Double
    /// The token bucket's depth (a quarter second of 1 Mbit/s) and the far side's buffer (bytes),
    /// as the integration tests' bursty proxy has them.
    var burst: Int64 = 32 * 1024
    var buffer: Int64 = 16 * 1024
    /// Bits per second of everything but video.
    var otherBps = 135_000.0
    /// How late the encoder follows a new target (s).
    var encoderLag = 0.5
    /// The most the encoder sends at a time (s), bits per second: simple content (a still
    /// picture) sends less than its target; nil: it fills its target.
    var encoderMaximum: (Double) -> Double? = { _ in nil }

    struct Point { let time: Double; let target: Int; let ceiling: Double?; let status: LinkMonitor.Status }

    static let step = 0.02
    static let fps = 30.0
    static let gopFrames = 60
    static let keyframeSeconds = 0.25

    /// Runs `seconds` of stream; a point per controller update (every 250 ms).
    func run(seconds: Double, controller: inout BitrateController) -> [Point] {
        var monitor = LinkMonitor()
        var points: [Point] = []
        var targets: [(time: Double, target: Int)] = [(0, controller.target)]
        var unacknowledged: Int64 = 0, acknowledged: Int64 = 0, far: Int64 = 0
        var tokens = Double(burst)
        var frame = 0
        var audioDebt = 0.0
        var lastControl = -1.0
        for tick in 0..<Int(seconds / Self.step) {
            let t = Double(tick) * Self.step
            let micros = Int64((t * 1e6).rounded())
            let asked = targets.last { $0.time <= t - encoderLag }?.target ?? targets[0].target
            let applied = encoderMaximum(t).map { min(asked, Int($0)) } ?? asked
            func send(_ bytes: Int, video: Bool, captured: Double) {
                monitor.willWrite(bytes: bytes, captureTime: Int64(captured * 1e6) + 1)
                monitor.didWrite(video: video)
                unacknowledged += Int64(bytes)
            }
            while Double(frame) / Self.fps < t + Self.step {
                let gopBytes = Double(applied) / 8 * Double(Self.gopFrames) / Self.fps
                let keyframe = Double(applied) / 8 * Self.keyframeSeconds
                let bytes = frame % Self.gopFrames == 0 ? keyframe : (gopBytes - keyframe) / Double(Self.gopFrames - 1)
                send(Int(bytes), video: true, captured: Double(frame) / Self.fps)
                frame += 1
            }
            audioDebt += otherBps / 8 * Self.step
            if audioDebt >= 1 { send(Int(audioDebt), video: false, captured: t); audioDebt -= Double(Int(audioDebt)) }

            let linkBytes = rate(t) / 8 * Self.step
            tokens = min(max(Double(burst), linkBytes), tokens + linkBytes)
            let out = min(far, Int64(tokens))
            far -= out
            tokens -= Double(out)
            let taken = min(unacknowledged, buffer - far)
            far += taken
            unacknowledged -= taken
            acknowledged += taken

            let status = monitor.sample(at: micros, queue: .init(unacknowledged: unacknowledged, acknowledged: acknowledged), oldestQueued: nil)
            if t - lastControl >= 0.25 - 1e-9 {
                lastControl = t
                let target = controller.update(at: micros, status)
                if target != targets.last?.target { targets.append((t, target)) }
                points.append(Point(time: t, target: target, ceiling: controller.ceiling, status: status))
            }
        }
        return points
    }
}
