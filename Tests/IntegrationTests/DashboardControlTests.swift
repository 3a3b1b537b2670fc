import Foundation
import XCTest

/// The dashboard's controls (issue 39, item 4) in headless Chromium (scripts/browser): opened
/// with `#control=KEY`, a click mutes a source and a slider turns one down in the recording itself,
/// as `GET /api` and the file's tones show; a bad bit rate shows the API's error on the page. An
/// output is added and removed with the page's form and button, and the main picture and the
/// layout chosen, which the recording shows. Opened without the key, or with a wrong one, the page
/// has no controls.
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
    func eventually(_ condition: () -> Bool) -> Bool { waitUntil(deadline: Self.settle, condition: condition) }

    /// Issue 52, item 8: with the built-in sources, whose name is a long lavfi graph, the controls
    /// stay in their card and take a real click (it landed on the link plot beside it); in serve,
    /// o0 shares the viewers' encode, so it shows no bit-rate field the API would refuse.
    func testTheControlsTakeRealClicksAndShowOnlyWhatWorks() throws {
        let job = try ServingLivemux(["record", "-q", "-t", "30", "--http", "127.0.0.1:0", "--control-key-file", keyFile, "-o", "\(dir)/r.flv"],
                                     directory: dir)
        let page = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let port = try XCTUnwrap(URLComponents(string: page)?.port)
        let mute = #"[data-control="mute-a0"]"#
        let browser = try Browser.open(page + "#control=" + key, ["--click", mute, "--text", mute, "unmute",
                                                                  "--eval", #"document.querySelector('[data-control="mute-a0"]').getAttribute('aria-pressed')"#])
        XCTAssertEqual(browser.status, 0, browser.stderr)
        XCTAssertEqual(try browser.value(0) as? String, "true")
        XCTAssertTrue(eventually { entry("a0", of: "sources", port)["mute"] as? Bool == true }, "the click reached the API")
        job.stop()
        _ = job.wait()
        let serve = try ServingLivemux(["serve", "-q", "--listen", "127.0.0.1:0", "--control-key-file", keyFile, "-t", "30", "--size", "320x240",
                                        "-o", "\(dir)/s.flv"], directory: dir)
        let servePage = try XCTUnwrap(serve.dashboardURL(), serve.stderr)
        let shown = try Browser.open(servePage + "#control=" + key, ["--wait", #"[data-control="remove-o0"]"#, "--seconds", "1.5",
                                                                     "--eval", #"document.querySelector('[data-control="vbitrate-o0"]').closest('form').hidden"#])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertEqual(try shown.value(0) as? Bool, true, "o0 shares the viewers' encode: no bit-rate field")
        serve.stop()
        _ = serve.wait()
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
        waitForMediaTime(port, 1.5)
        let before = mediaTime(port)

        let mute = #"[data-control="mute-a1"]"#, message = #"[data-control="message"]"#
        let dom = "\(dir)/dom.html"
        let badRate = #"vbitrate is bits per second from 1k to 1G: 800000 or "800k""#
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
        waitForMediaTime(port, clicked + 3)
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
        waitForMediaTime(port, 1)
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

    /// Two video sources, blue (the main picture at the start) and red.
    static let twoColors = ["--video", "lavfi:color=c=blue:size=640x360:rate=25", "--video", "lavfi:color=c=red:size=320x180:rate=25"]
    /// How long an output added on the page writes before its remove button is clicked (s).
    static let addedFor = 3.0
    /// How much of the recording to wait for after a change before the next step (s of media time).
    static let shown = 2.0

    /// Waits until the job has recorded `time` of media (a failure if it never does, within
    /// `settle` seconds past it).
    func waitForMediaTime(_ port: Int, _ time: Double, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(waitUntil(deadline: time + Self.settle) { mediaTime(port) >= time }, "the job reached \(time) s of media", file: file, line: line)
    }

    static func isRed(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.r > 200 && p.b < 60 }
    static func isBlue(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.b > 200 && p.r < 60 }

    /// An output added through the form (its own size and bit rate), removed with its button after
    /// a few seconds: the job lists it finished, its file is complete and starts with a keyframe.
    /// An add with a bad size shows the API's error, creates nothing, and empties the output field.
    func testAnOutputIsAddedAndRemovedOnThePage() throws {
        let (out, added, refused) = ("\(dir)/r.flv", "\(dir)/added.flv", "\(dir)/refused.flv")
        let job = try ServingLivemux(["record", "-q", "-t", "60", "--http", "127.0.0.1:0", "--control-key-file", keyFile]
                                     + Self.twoColors + ["-o", out], directory: dir)
        let page = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let port = try XCTUnwrap(URLComponents(string: page)?.port)
        waitForMediaTime(port, 1)
        let (field, size, submit) = (#"[data-control="add-output"]"#, #"[data-control="add-size"]"#, #"[data-control="add-output-submit"]"#)
        let (remove, message) = (#"[data-control="remove-o1"]"#, #"[data-control="message"]"#)
        let dom = "\(dir)/dom.html"
        let badSize = #"size is an even WIDTHxHEIGHT from 16x16 to 8192x8192, such as "1280x720""#
        let browser = try Browser.open(page + "#control=" + key, [
            "--type", field, added, "--type", size, "320x180", "--type", #"[data-control="add-vbitrate"]"#, "300k",
            "--click", submit, "--text", message, "added o1: \(added)",
            "--wait", remove, "--sleep", "\(Self.addedFor)", "--click", remove,
            "--text", #"tr[data-id="o1"] td:nth-child(4)"#, "finished",
            "--type", field, refused, "--type", size, "641x360", "--click", submit, "--text", message, badSize,
            "--seconds", "0", "--dom", dom,
            "--eval", "document.querySelector('\(field)').value", "--eval", "document.querySelector('\(size)').value",
            "--eval", "document.querySelector('\(remove)').hidden",
            "--eval", #"document.querySelector('[data-control="remove-o0"]').hidden"#])
        XCTAssertEqual(browser.status, 0, browser.stderr)
        XCTAssertEqual(try browser.value(0) as? String, "", "the output field is emptied on submit")
        XCTAssertEqual(try browser.value(1) as? String, "641x360", "a refused size stays to be fixed")
        XCTAssertEqual(try browser.value(2) as? Bool, true, "no remove button for a finished output")
        XCTAssertEqual(try browser.value(3) as? Bool, false, "a remove button for the output still writing")
        // What was typed goes back into no element: only the API's answers (targets masked) show.
        let html = try String(contentsOfFile: dom, encoding: .utf8)
        XCTAssertFalse(html.contains(key), "the key is in no element")
        XCTAssertFalse(html.contains(refused), "the refused output is in no element")
        // Chromium logs each answer of 400 and more; the bad size's is the one expected.
        XCTAssertEqual(browser.console.filter { !$0.contains("/api/outputs") || !$0.contains("400") }, [],
                       "console messages or script errors")

        let o1 = entry("o1", of: "outputs", port)
        XCTAssertEqual(o1["target"] as? String, added, "\(o1)")
        XCTAssertEqual(o1["state"] as? String, "finished", "\(o1)")
        XCTAssertEqual((o1["settings"] as? [String: Any])?["size"] as? String, "320x180", "\(o1)")
        XCTAssertEqual((o1["settings"] as? [String: Any])?["vbitrate"] as? Int, 300_000, "\(o1)")
        XCTAssertEqual((self.job(port)["outputs"] as? [[String: Any]])?.count, 2, "the refused add is not an output")
        XCTAssertEqual(entry("o0", of: "outputs", port)["state"] as? String, "writing", "the recording goes on")
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)

        XCTAssertEqual(try Tools.decodeErrors(added), "")
        let probe = try Tools.probe(added, packets: true)
        let video = try XCTUnwrap(probe.stream("video"))
        XCTAssertEqual(video.width, 320)
        let first = try XCTUnwrap(probe.packets?.first { $0.stream_index == video.index })
        XCTAssertTrue(first.flags.hasPrefix("K"), "the added file starts with a keyframe")
        // From the add to the removal: at least the wait between the two clicks.
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(probe.format.seconds), Self.addedFor - 0.5)
        XCTAssertFalse(FileManager.default.fileExists(atPath: refused), "a refused add creates no file")
    }

    /// v1 (red) chosen as the main picture on the page, then the side-by-side layout (a second
    /// page load, which shows v1 as main): `GET /api` says so, and frames of the recording show it.
    func testTheMainPictureAndTheLayoutAreChosenOnThePage() throws {
        let out = "\(dir)/r.flv"
        let job = try ServingLivemux(["record", "-q", "-t", "60", "--http", "127.0.0.1:0", "--control-key-file", keyFile]
                                     + Self.twoColors + ["-o", out], directory: dir)
        let page = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let port = try XCTUnwrap(URLComponents(string: page)?.port)
        waitForMediaTime(port, 1)
        let (main, layout) = (#"[data-control="main"]"#, #"[data-control="layout"]"#)
        let chooseMain = try Browser.open(page + "#control=" + key, [
            "--wait", #"[data-control="main"] option[value="v1"]"#, "--select", main, "v1", "--seconds", "0.5",
            "--eval", "document.querySelector('\(layout)').value", "--eval", #"document.querySelector('[data-control="message"]').textContent"#])
        XCTAssertEqual(chooseMain.status, 0, chooseMain.stderr)
        XCTAssertEqual(chooseMain.console, [], "console messages or script errors")
        XCTAssertEqual(try chooseMain.value(0) as? String, "pip", "the job's layout shown")
        XCTAssertEqual(try chooseMain.value(1) as? String, "", "no error")
        XCTAssertTrue(eventually { (self.job(port)["layout"] as? [String: String])?["main"] == "v1" }, "\(self.job(port))")
        // Read once the job says so: the change took effect by this media time.
        let mainChosen = mediaTime(port)

        waitForMediaTime(port, mainChosen + Self.shown)
        let chooseLayout = try Browser.open(page + "#control=" + key, [
            "--wait", #"[data-control="main"] option[value="v1"]"#, "--select", layout, "side-by-side", "--seconds", "0.5",
            "--eval", "document.querySelector('\(main)').value"])
        XCTAssertEqual(chooseLayout.status, 0, chooseLayout.stderr)
        XCTAssertEqual(chooseLayout.console, [], "console messages or script errors")
        XCTAssertEqual(try chooseLayout.value(0) as? String, "v1", "a new page shows the job's main picture")
        XCTAssertTrue(eventually { self.job(port)["layout"] as? [String: String] == ["layout": "side-by-side", "main": "v1"] }, "\(self.job(port))")
        let layoutChosen = mediaTime(port)
        waitForMediaTime(port, layoutChosen + Self.shown)
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)

        XCTAssertEqual(try Tools.decodeErrors(out), "")
        let before = try MediaAnalysis.frame(out, at: 0.5)
        let afterMain = try MediaAnalysis.frame(out, at: mainChosen + 1)
        let afterLayout = try MediaAnalysis.frame(out, at: layoutChosen + 1)
        print("dashboard main picture: chosen by \(mainChosen) s, layout by \(layoutChosen) s")
        let middle = (before.width / 2, before.height / 2)
        XCTAssertTrue(Self.isBlue(MediaAnalysis.pixel(before, middle.0, middle.1)), "v0 the main picture at first: \(MediaAnalysis.pixel(before, middle.0, middle.1))")
        XCTAssertTrue(Self.isRed(MediaAnalysis.pixel(afterMain, middle.0, middle.1)), "v1 the main picture after the choice: \(MediaAnalysis.pixel(afterMain, middle.0, middle.1))")
        let (left, right) = (MediaAnalysis.pixel(afterLayout, before.width / 4, middle.1), MediaAnalysis.pixel(afterLayout, before.width * 3 / 4, middle.1))
        XCTAssertTrue(Self.isRed(left) && Self.isBlue(right), "side by side, v1 on the left: \(left) \(right)")
    }

    /// Without the key the page has no controls; with a wrong one neither, and it says why.
    func testAPageWithoutTheKeyHasNoControls() throws {
        let job = try ServingLivemux(["serve", "-q", "--listen", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--audio", "lavfi:sine", "--size", "320x240", "-t", "60"], directory: dir)
        let page = try XCTUnwrap(job.dashboardURL(), job.stderr)
        XCTAssertEqual(job.printed("control at "), page + "#control=****", "said with -q too")
        // The live video's sound button is the viewer's own, not a control of the job.
        let controls = "document.querySelectorAll('button:not(#unmute), input, select, textarea, [data-control]:not([data-control=\"message\"])').length"
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
