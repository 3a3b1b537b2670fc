import Foundation
import XCTest

/// An unpaced recording captures at idle priority, so that capture fills the gaps x264 leaves
/// instead of preempting it; but only when the process may put a thread back at normal priority,
/// and a machine kept busy by other processes gets it put back instead of starving it.
final class PriorityTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws { dir = try Tools.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    func testUnpacedCaptureRunsAtIdlePriorityAndPacedCaptureDoesNot() throws {
        let mayRestore = Self.threadMayLeaveIdlePriority()
        let unpaced = "\(dir)/unpaced.asf"
        var sawIdle = false
        let r = try Tools.livemux(["record", "-q", "--no-realtime", "--size", "320x240", "-t", "60", "-o", unpaced], timeout: 60) { process in
            let deadline = Date().addingTimeInterval(5)
            while !sawIdle && Date() < deadline {
                sawIdle = Self.idleThreads(of: process.processIdentifier) > 0
                Thread.sleep(forTimeInterval: 0.05)
            }
            process.interrupt()
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(sawIdle, mayRestore, mayRestore ? "capture should run at SCHED_IDLE" : "nothing may go idle without a way back")
        XCTAssertEqual(try Tools.decodeErrors(unpaced), "")

        // Paced: a real-time capture must never wait for a free core.
        var idleWhilePaced = 0
        let paced = try Tools.livemux(["record", "-q", "--size", "160x120", "-t", "1.5", "-o", "\(dir)/paced.asf"], timeout: 30) { process in
            Thread.sleep(forTimeInterval: 0.7)
            idleWhilePaced = Self.idleThreads(of: process.processIdentifier)
        }
        XCTAssertEqual(paced.status, 0, paced.stderr)
        XCTAssertEqual(idleWhilePaced, 0)
    }

    /// At 160x120 x264 is cheap and the AAC encoder needs most of a core: at idle priority every
    /// wake-up of x264's threads would preempt it (18% slower), so capture goes back to normal
    /// priority within a few watchdog windows, without a warning.
    func testCaptureThatNeedsMostOfACoreGoesBackToNormalPriority() throws {
        guard Self.threadMayLeaveIdlePriority() else { throw XCTSkip("this user cannot restore a thread's priority") }
        var sawIdle = false, backToNormal = false
        let r = try Tools.livemux(["record", "--no-realtime", "--size", "160x120", "-t", "600", "-o", "\(dir)/small.flv"], timeout: 60) { process in
            let deadline = Date().addingTimeInterval(5)
            while !backToNormal && Date() < deadline {
                let idle = Self.idleThreads(of: process.processIdentifier)
                sawIdle = sawIdle || idle > 0
                backToNormal = sawIdle && idle == 0
                Thread.sleep(forTimeInterval: 0.05)
            }
            process.interrupt()
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(sawIdle)
        XCTAssertTrue(backToNormal, "capture stayed at idle priority")
        XCTAssertFalse(r.stderr.contains("warning"), r.stderr)
    }

    /// Two processes spinning on the two cores would starve an idle-priority capture thread for
    /// good (a few seconds of media took over a minute); the watchdog must put it back at normal
    /// priority, say so once, and the recording must end in about the time it takes at normal
    /// priority.
    func testBusyMachineDoesNotStarveAnUnpacedRecording() throws {
        let spinners = try (0..<2).map { _ -> Process in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", "while :; do :; done"]
            try p.run()
            return p
        }
        defer { spinners.forEach { $0.terminate(); $0.waitUntilExit() } }
        let path = "\(dir)/busy.flv"
        let r = try Tools.livemux(["record", "--no-realtime", "--size", "320x240", "-t", "4", "-o", path], timeout: 90)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(r.seconds, 20, "an unpaced recording starved beside busy processes")
        let warnings = r.stderr.components(separatedBy: "warning: other processes keep the cores busy").count - 1
        XCTAssertEqual(warnings, Self.threadMayLeaveIdlePriority() ? 1 : 0, r.stderr)
        XCTAssertEqual(try Tools.probe(path).format.seconds ?? 0, 4, accuracy: 0.1)
        XCTAssertEqual(try Tools.decodeErrors(path), "")
    }

    /// How many threads of a process run at SCHED_IDLE (policy 5 in /proc/PID/task/TID/sched).
    static func idleThreads(of pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.filter { tid in
            guard let sched = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/sched", encoding: .utf8) else { return false }
            return sched.split(separator: "\n").contains { line in
                line.hasPrefix("policy") && line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) == "5"
            }
        }.count
    }

    /// Whether a thread of this user may go from SCHED_IDLE back to normal (CAP_SYS_NICE, or
    /// RLIMIT_NICE ≥ 20), tried on a thread of its own.
    static func threadMayLeaveIdlePriority() -> Bool {
        final class Outcome: @unchecked Sendable {
            var value = false
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        Thread.detachNewThread {
            var parameters = sched_param(sched_priority: 0)
            outcome.value = pthread_setschedparam(pthread_self(), 5, &parameters) == 0
                && pthread_setschedparam(pthread_self(), SCHED_OTHER, &parameters) == 0
            outcome.done.signal()
        }
        outcome.done.wait()
        return outcome.value
    }
}
