import Foundation
import XCTest

/// The dashboard's controls (issue 39, item 4) in headless Chromium (scripts/browser): opened
/// with `#control=KEY`, a click mutes a source and a slider turns one down in the recording itself,
/// as `GET /api` and the file's tones show; a bad bit rate shows the API's error on the page.
/// Opened without the key, or with a wrong one, the page has no controls.
final class DashboardControlTests: TemporaryDirectoryTestCase {
    var key = ""
    var keyFile = ""

    /// How long a change may take to show in `GET /api` after the page sent it.
    static let settle = 5.0
    /// The volume the slider gives a0 (linear).
    static let volume = 0.5

    override func setUpWithError() throws {
        try super.setUpWithError()
        try Browser.skipUnlessAvailable()
        key = (0..<32).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
        keyFile = "\(dir)/control.key"
        try (key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)
    }

    /// `GET /api` with the key: the job as JSON.
    func job(_ port: Int) -> [String: Any] {
        let head = "GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\n\r\n"
        let reply = Network.exchange(port: port, Array(head.utf8))
        let body = reply.range(of: "\r\n\r\n").map { String(reply[$0.upperBound...]) } ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    func mediaTime(_ port: Int) -> Double { job(port)["media_time_s"] as? Double ?? -1 }

    func entry(_ id: String, of list: String, _ port: Int) -> [String: Any] {
        (job(port)[list] as? [[String: Any]])?.first { $0["id"] as? String == id } ?? [:]
    }

    /// Polls until `condition` holds (false after `settle` seconds).
    func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(Self.settle)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    func testTheControlsMuteAndTurnDownSourcesOfTheRecording() throws {
        let out = "\(dir)/r.flv"
        let job = try ServingLivemux(["record", "-t", "40", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--audio", "lavfi:sine=frequency=440", "--audio", "lavfi:sine=frequency=1000",
                                      "--size", "320x240", "-o", out], directory: dir)
        let page = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let port = try XCTUnwrap(URLComponents(string: page)?.port)
        XCTAssertEqual(job.printed("control at "), page + "#control=****", "the control link, its key masked")
        XCTAssertFalse(job.stderr.contains(key), "the key is never printed")
        while mediaTime(port) < 1.5 { usleep(50_000) }
        let before = mediaTime(port)

        let mute = #"[data-control="mute-a1"]"#, message = #"[data-control="message"]"#
        let dom = "\(dir)/dom.html"
        let badRate = #"vbitrate is bits per second from 16k to 100M: 800000 or "800k""#
        let browser = try Browser.open(page + "#control=" + key, [
            "--click", mute, "--text", mute, "unmute",
            "--set", #"[data-control="volume-a0"]"#, "\(Self.volume)",
            "--type", #"[data-control="vbitrate-o0"]"#, "fast", "--click", #"[data-control="vbitrate-set-o0"]"#,
            "--text", message, badRate,
            "--type", #"[data-control="vbitrate-o0"]"#, "400k", "--click", #"[data-control="vbitrate-set-o0"]"#,
            "--text", #"tr[data-id="o0"] td:nth-child(2)"#, "400 kbit/s", "--text", message, "",
            "--seconds", "1", "--dom", dom,
            "--eval", "location.href", "--eval", "sessionStorage.getItem('livemux-control-key')",
            "--eval", #"document.querySelector('[data-control="mute-a1"]').getAttribute('aria-pressed')"#,
            "--eval", #"document.querySelector('[data-control="cut"]') === null"#])
        // The slider's change is the last the page sent before the bit rates: by now it was asked.
        let clicked = mediaTime(port)
        XCTAssertEqual(browser.status, 0, browser.stderr)
        XCTAssertEqual(try browser.value(0) as? String, page, "the key left the address bar")
        XCTAssertEqual(try browser.value(1) as? String, key, "and is kept for the tab")
        XCTAssertEqual(try browser.value(2) as? String, "true", "mute-a1 shows a1 muted")
        XCTAssertEqual(try browser.value(3) as? Bool, true, "no cut button: nothing is cut into segments")
        XCTAssertFalse(try String(contentsOfFile: dom, encoding: .utf8).contains(key), "the key is in no element")
        // Chromium logs each answer of 400 and more; the bad bit rate's is the one expected.
        XCTAssertEqual(browser.console.filter { !$0.contains("/api/outputs/o0") || !$0.contains("400") }, [],
                       "console messages or script errors")

        XCTAssertTrue(eventually { entry("a1", of: "sources", port)["mute"] as? Bool == true }, "\(self.job(port))")
        XCTAssertTrue(eventually { entry("a0", of: "sources", port)["volume"] as? Double == Self.volume }, "\(self.job(port))")
        XCTAssertEqual(entry("a0", of: "sources", port)["mute"] as? Bool, false)
        XCTAssertEqual((entry("o0", of: "outputs", port)["settings"] as? [String: Any])?["vbitrate"] as? Int, 400_000)

        // Three seconds more of the recording after the clicks, then the tones in the file.
        while mediaTime(port) < clicked + 3 { usleep(50_000) }
        let end = mediaTime(port)
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)
        let window = 0.05
        let samples = try MediaAnalysis.samples(out)
        let high = MediaAnalysis.amplitudes(of: 1000, in: samples, window: window)
        let low = MediaAnalysis.amplitudes(of: 440, in: samples, window: window)
        func mean(_ values: [Double], _ from: Double, _ to: Double) -> Double {
            let slice = values[min(values.count, Int(from / window))..<min(values.count, Int(to / window))]
            return slice.isEmpty ? .nan : slice.reduce(0, +) / Double(slice.count)
        }
        let (highBefore, highAfter) = (mean(high, 0.5, before), mean(high, clicked + 0.5, end - 0.5))
        let (lowBefore, lowAfter) = (mean(low, 0.5, before), mean(low, clicked + 0.5, end - 0.5))
        print("dashboard control: before \(before) s, clicked by \(clicked) s, end \(end) s; 1 kHz \(highBefore) → \(highAfter), 440 Hz \(lowBefore) → \(lowAfter)")
        XCTAssertGreaterThan(highBefore, 0.05, "1 kHz in the recording before the click")
        XCTAssertLessThan(highAfter, highBefore * 0.05, "1 kHz gone after the click")
        XCTAssertEqual(lowAfter / lowBefore, Self.volume, accuracy: 0.1, "440 Hz at the slider's volume")
    }

    /// A recording cut into segments gets a cut button: a click starts the next segment.
    func testTheCutButtonStartsTheNextSegment() throws {
        let job = try ServingLivemux(["record", "-q", "-t", "40", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "320x240", "--segment-time", "100", "-o", "\(dir)/seg-%03d.flv"], directory: dir)
        let page = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let port = try XCTUnwrap(URLComponents(string: page)?.port)
        while mediaTime(port) < 1 { usleep(50_000) }
        let next = "\(dir)/seg-001.flv"
        XCTAssertFalse(FileManager.default.fileExists(atPath: next))
        let browser = try Browser.open(page + "#control=" + key, [
            "--click", #"[data-control="cut"]"#, "--text", #"[data-control="message"]"#, "cut at the next keyframe", "--seconds", "0"])
        XCTAssertEqual(browser.status, 0, browser.stderr)
        XCTAssertEqual(browser.console, [], "console messages or script errors")
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: next) }, "the second segment begun")
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/seg-002.flv"), "one cut, one click")
    }

    /// Without the key the page has no controls; with a wrong one neither, and it says why.
    func testAPageWithoutTheKeyHasNoControls() throws {
        let job = try ServingLivemux(["serve", "-q", "--listen", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--audio", "lavfi:sine", "--size", "320x240", "-t", "60"], directory: dir)
        let page = try XCTUnwrap(job.dashboardURL(), job.stderr)
        XCTAssertEqual(job.printed("control at "), page + "#control=****", "said with -q too")
        let controls = "document.querySelectorAll('button, input, select, textarea, [data-control]:not([data-control=\"message\"])').length"
        let errors = "document.getElementById('errors').textContent"
        let wrong = String(key.reversed())
        for (url, said) in [(page, ""), (page + "#control=" + wrong, "control: the control key is wrong\n")] {
            let browser = try Browser.open(url, ["--wait", "#connection.live", "--seconds", "2", "--eval", controls,
                                                 "--eval", "document.getElementById('control-section').hidden", "--eval", errors,
                                                 "--eval", "location.href"])
            XCTAssertEqual(browser.status, 0, browser.stderr)
            XCTAssertEqual(try browser.value(0) as? Int, 0, "\(url): no controls")
            XCTAssertEqual(try browser.value(1) as? Bool, true, url)
            XCTAssertEqual(try browser.value(2) as? String, said, url)
            XCTAssertEqual(try browser.value(3) as? String, page, "\(url): no key left in the address bar")
            XCTAssertEqual(browser.console.filter { !$0.contains("/api") || !$0.contains("403") }, [], url)
        }
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)
    }
}
