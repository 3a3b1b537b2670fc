import Foundation
import FFmpeg

/// One absence of a live device: fills its streams as time passes and opens it again with
/// backoff (each attempt on a thread of its own, `DeviceOpener`) until it is back or has been
/// away longer than `--device-timeout`. Runs on the device's capture thread.
struct DeviceOutage {
    /// The device as the messages name it (credentials masked).
    let name: String
    let policy: DeviceReopening
    let stop: StopSignal
    /// When it failed (µs, monotonic).
    let failed: Int64

    init(name: String, policy: DeviceReopening, stop: StopSignal, failed: Int64 = Timestamp.monotonicMicroseconds()) {
        (self.name, self.policy, self.stop, self.failed) = (name, policy, stop, failed)
    }

    /// Fills (`fill` up to a capture time; false once the encoders want no more) and reopens
    /// (`open`) until the device is back (returned), the recording stops or is complete (nil).
    /// Throws once the device has been away for the timeout, after filling up to then.
    /// A device that does not end the recording (`policy.endsRecording`) is left out at the
    /// timeout instead (`leftOut`, once) and still reopened.
    func rideOut(problem: String, fill: (Int64) throws -> Bool, leftOut: (String) -> Void = { _ in },
                 open: @escaping @Sendable () throws -> InputDevice) throws -> InputDevice? {
        let timeout = Int64(policy.timeout * 1_000_000)
        var attempts = 0, opener: DeviceOpener<InputDevice>?, next = failed + delay(1)
        var lastProblem = problem, isLeftOut = false
        while true {
            let now = Timestamp.monotonicMicroseconds()
            if stop.isRequested {
                _ = try fill(now)
                return nil
            }
            if let result = opener?.result {
                opener = nil
                switch result {
                case .success(let device): return device
                case .failure(let error): lastProblem = Self.describe(error)
                }
                next = now + delay(attempts + 1)
            }
            if now - failed >= timeout && !policy.endsRecording && !isLeftOut {
                isLeftOut = true
                leftOut("device '\(name)' stayed away \(Self.seconds(policy.timeout)) s (last: \(lastProblem)): the recording goes on"
                        + " without it, and takes it back when it returns")
            }
            if now - failed >= timeout && policy.endsRecording {
                _ = try fill(now)
                throw LiveMuxError.input("device '\(name)' went away and stayed away \(Self.seconds(policy.timeout)) s"
                                         + " (\(attempts) reopen attempts; last: \(lastProblem)); the recording ends here"
                                         + " (check the device, or give --device-timeout more seconds)")
            }
            guard try fill(now - policy.fillLag) else { return nil }
            if opener == nil && now >= next {
                attempts += 1
                opener = DeviceOpener.start("livemux-reopen", open: open)
            }
            _ = stop.sleep(untilMonotonic: now + policy.fillInterval)
        }
    }

    /// The wait (µs) before attempt `n`.
    private func delay(_ n: Int) -> Int64 {
        Int64(policy.backoff.delay(beforeAttempt: n, random: Double.random(in: 0..<1)) * 1_000_000)
    }

    static func describe(_ error: Error) -> String {
        (error as? FFmpegError)?.message ?? String(describing: error)
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(format: "%.1f", s)
    }
}
