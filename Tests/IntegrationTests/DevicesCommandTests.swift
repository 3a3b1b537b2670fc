import Foundation
import XCTest

/// `livemux devices` against the device rig: its private PulseAudio daemon's pipe source and
/// null sink monitor, and its X display, are listed, with the ALSA PCMs that can capture;
/// without a daemon pulse says plainly that PulseAudio is not running.
final class DevicesCommandTests: XCTestCase {
    func testTheRigsDevicesAreListed() throws {
        let rig = try DeviceRig()
        defer { rig.stop() }
        let r = try Tools.run(Tools.livemux, ["devices", "--json"], environment: rig.environment, timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdout) as? [String: [String: Any]], r.stdoutText)
        let names = { (format: String) in ((object[format]?["sources"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } }
        XCTAssertTrue(names("pulse").contains(DeviceRig.microphone), r.stdoutText)
        XCTAssertTrue(names("pulse").contains(DeviceRig.sinkMonitor), r.stdoutText)
        let pulse = (object["pulse"]?["sources"] as? [[String: Any]]) ?? []
        XCTAssertEqual(pulse.first { $0["default"] as? Bool == true }?["name"] as? String, DeviceRig.microphone, "the rig's default source")
        XCTAssertTrue(names("x11grab").contains(rig.display), r.stdoutText)
        XCTAssertNotNil(object["alsa"]); XCTAssertNotNil(object["v4l2"])
        // Only what ALSA opens for capture (issue 32, item 13): its pulse plugin (the rig's daemon),
        // default (pulse-alsa.conf makes it the pulse plugin while a daemon runs) and null; not the
        // plugins that only play (upmix, vdownmix) or cannot open here (jack: no server, lavrate:
        // no card), and checking them prints nothing.
        XCTAssertEqual(Set(names("alsa")), ["pulse", "default", "null"], r.stdoutText)
        XCTAssertEqual(r.stderr, "", "ALSA and JACK keep quiet while the devices are checked")
        let text = try Tools.run(Tools.livemux, ["devices"], environment: rig.environment, timeout: 30)
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdoutText.contains("pulse (--audio pulse:NAME)\n"), text.stdoutText)
        XCTAssertTrue(text.stdoutText.contains("  \(DeviceRig.microphone) "), text.stdoutText)
        // A source that is not there: the error says which ones are, and nothing is written.
        let out = NSTemporaryDirectory() + "livemux-nosuch-\(getpid()).asf"
        let wrong = try Tools.run(Tools.livemux, ["record", "--audio", "pulse:nosuch", "--no-video", "-t", "1", "-o", out],
                                  environment: rig.environment, timeout: 30)
        XCTAssertEqual(wrong.status, 1, wrong.stderr)
        XCTAssertTrue(wrong.stderr.hasPrefix("error: cannot open input 'pulse:nosuch'"), wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("pulse offers ") && wrong.stderr.contains(DeviceRig.microphone), wrong.stderr)
        XCTAssertEqual(wrong.stderr.split(separator: "\n").count, 1, wrong.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "no file left behind")
        // The daemon gone: pulse lists nothing and says why; the command still succeeds.
        rig.killPulse()
        let gone = try Tools.run(Tools.livemux, ["devices", "--json"], environment: rig.environment, timeout: 30)
        XCTAssertEqual(gone.status, 0, gone.stderr)
        let after = try XCTUnwrap(try JSONSerialization.jsonObject(with: gone.stdout) as? [String: [String: Any]])
        // Said plainly, not "Generic error in an external library".
        XCTAssertEqual(after["pulse"]?["problem"] as? String,
                       "PulseAudio is not running or not reachable at unix:\(rig.socketPath) (start it, or set PULSE_SERVER)", gone.stdoutText)
        XCTAssertEqual(Set(((after["alsa"]?["sources"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }), ["null"],
                       "ALSA's pulse plugin cannot capture without the daemon")
    }

    func testAnUnknownOptionIsAUsageError() throws {
        let r = try Tools.livemux(["devices", "--bogus"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.hasPrefix("error: unknown option '--bogus' for devices"), r.stderr)
    }
}
