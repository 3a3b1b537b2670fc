import Foundation

/// How often `waitUntil` asks its condition again.
let waitPollInterval = 0.05

/// Asks `condition` until it holds or `deadline` seconds have passed, every `interval` seconds;
/// whether it held. The same helper as IntegrationTests' (Support.swift): test targets share no
/// sources. In place of a wait with no end, so a pipeline that failed fails the test instead of
/// hanging the suite.
@discardableResult
func waitUntil(deadline seconds: Double, every interval: Double = waitPollInterval, condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(UInt32(interval * 1_000_000))
    }
    return try condition()
}
