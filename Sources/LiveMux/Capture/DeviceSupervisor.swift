import Foundation
import FFmpeg

/// Keeps a live device's recording going: tells a device that ended, failed or stalled from one
/// that is just quiet, fills its streams while it is away and opens it again (`DeviceOutage`),
/// and fills the gap before its first frame once it is back. Used by the capture thread only.
final class DeviceSupervisor {
    /// What `--stats` shows about the device.
    let status: DeviceStatus
    private let spec: SourceSpec
    /// The device as messages name it: credentials in its URL masked.
    private let name: String
    private let policy: DeviceReopening
    /// What the device is opened again with.
    private let options: [(String, String)]
    private let report: @Sendable (String) -> Void
    private var fill: DeviceFill
    /// When a device that was reopened failed (µs): its first frame fills the gap before it.
    private var returning: Int64?
    private var video: FrameConsumer?, audio: FrameConsumer?

    init(spec: SourceSpec, format: SourceFormat, options: [(String, String)], policy: DeviceReopening,
         report: @escaping @Sendable (String) -> Void) {
        status = DeviceStatus(name: spec.description)
        self.spec = spec
        name = spec.maskedDescription
        self.policy = policy
        self.options = options
        self.report = report
        // A gap is filled at the device's rate (as its grid, from avg_frame_rate when need be).
        let rate = format.frameRate.doubleValue > 0 ? format.frameRate : format.averageFrameRate
        fill = DeviceFill(framesPerSecond: rate.doubleValue)
    }

    /// The encoders a gap is filled into.
    func attach(video: FrameConsumer?, audio: FrameConsumer?) {
        (self.video, self.audio) = (video, audio)
    }

    /// The next packet of the device, or why there is none (`problem`: it ended, failed, or
    /// delivered nothing for `stallTimeout`, `startTimeout` before its first packet) with since
    /// when; neither when the wait ended without any of these (a stop woke it).
    func next(from reader: DeviceReader) -> (packet: Packet?, problem: String?, since: Int64) {
        let quiet = reader.quiet
        let limit = quiet.afterData ? policy.stallTimeout : policy.startTimeout
        let now = Timestamp.monotonicMicroseconds()
        switch reader.next(until: quiet.since + Int64(limit * 1_000_000)) {
        case .packet(let p): return (p, nil, now)
        case .ended: return (nil, "it ended", now)
        case .failed(let error): return (nil, DeviceOutage.describe(error), now)
        case .waiting:
            let since = reader.quiet.since
            guard Timestamp.monotonicMicroseconds() - since >= Int64(limit * 1_000_000) else { return (nil, nil, now) }
            let what = quiet.afterData ? "it stalled: nothing read for" : "nothing read from it in the first"
            return (nil, "\(what) \(DeviceOutage.seconds(limit)) s", since)
        }
    }

    /// The device failed (`since`: when it last delivered): fills its streams and opens it again;
    /// the device once it is back with when it failed, nil when the recording stopped or is
    /// complete meanwhile. Throws at the timeout.
    func rideOut(_ problem: String, since: Int64, stop: StopSignal) throws -> (device: InputDevice, failed: Int64)? {
        let outage = DeviceOutage(name: name, policy: policy, stop: stop, failed: since)
        status.failed()
        let filling = [video.map { _ in "its last frame" }, audio.map { _ in "silence" }].compactMap { $0 }.joined(separator: " and ")
        let limit = policy.endsRecording ? "for up to \(DeviceOutage.seconds(policy.timeout)) s: --device-timeout"
            : "it is not the first of its kind: the recording goes on whatever it does"
        report("device '\(name)' failed (\(problem)); recording \(filling) in its place while it is reopened (\(limit))")
        let (spec, options) = (self.spec, self.options)
        let (report, status) = (self.report, self.status)
        guard let device = try outage.rideOut(problem: problem, fill: { try fillGap(upTo: $0) }, leftOut: { message in
            status.leftOut()
            report(message)
        }, open: {
            try InputDevice(format: spec.format, url: spec.url, options: options)
        }) else { return nil }
        return (device, outage.failed)
    }

    /// The reopened device is in place; its first frame fills the gap since `failed`.
    func reopened(failedAt failed: Int64) {
        returning = failed
        status.reopened()
    }

    /// Before a frame at `time` (arrived at `now`): a reopened device's first frame fills the gap
    /// before it first. False once the encoders want no more.
    func frameArrives(at time: Int64, now: Int64) throws -> Bool {
        guard let failed = returning else { return true }
        returning = nil
        let away = Double(now - failed) / 1_000_000
        status.back(after: away)
        report("device '\(name)' is back after \(String(format: "%.1f", away)) s")
        return try fillGap(upTo: time)
    }

    /// The part of an audio frame after what was filled, and its time; nil when all was filled.
    func admit(audio frame: Frame, at time: Int64) throws -> (Frame, Int64)? {
        try fill.admit(audio: frame, at: time)
    }

    /// A frame of the device is handed on: what a later gap repeats or follows.
    func delivered(_ frame: Frame, _ kind: StreamKind, at time: Int64) throws {
        switch kind {
        case .video: try fill.delivered(video: frame, at: time)
        case .audio: fill.delivered(audio: frame, at: time)
        }
    }

    /// Fills the device's streams up to `time` (µs on the capture clock); false once the
    /// encoders want no more.
    private func fillGap(upTo time: Int64) throws -> Bool {
        let more = try fill.fill(upTo: time, audio: audio, video: video)
        status.filled(seconds: fill.filledSeconds, frames: fill.filledFrames)
        return more
    }
}
