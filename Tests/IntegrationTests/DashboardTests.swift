import Foundation
import XCTest

/// The dashboard endpoints of the HTTP server (`serve --listen`, `record --http`), asked over real
/// sockets of a running livemux: `/stats` and `/events` validated against docs/stats.schema.json,
/// `/snapshot.jpg` decoded by ffmpeg and compared with the test pattern it shows.
final class DashboardTests: TemporaryDirectoryTestCase {
    /// The port of a URL such as `http://127.0.0.1:41234/`.
    private func port(of url: String) throws -> Int {
        try XCTUnwrap(URLComponents(string: url)?.port, "no port in \(url)")
    }

    /// The body of a whole HTTP reply.
    private func body(_ reply: String) -> String {
        reply.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    }

    /// The objects of the `data:` lines of a server-sent event stream.
    private func events(_ reply: String) throws -> [String] {
        body(reply).split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
    }

    /// The media time `/stats` says, -1 before it answers.
    private func mediaTime(_ port: Int) -> Double {
        let reply = Network.get(port: port, "/stats")
        return (try? JSONSerialization.jsonObject(with: Data(body(reply).utf8)) as? [String: Any])?["media_time_s"] as? Double ?? -1
    }

    private func object(_ line: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "a JSON object: \(line)")
    }

    /// `/stats` with a viewer watching, then `/events` to the end of the run: every object valid
    /// against the schema, the viewer counted, one event a second with the media time moving.
    func testStatsAndEventsMatchTheSchema() throws {
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "5", "--size", "160x120"], directory: dir)
        let page = try XCTUnwrap(serve.dashboardURL(), serve.stderr)
        let port = try port(of: page)
        let viewer = Network.connect(port: port)
        XCTAssertGreaterThanOrEqual(viewer, 0)
        defer { close(viewer) }
        _ = Array("GET /live.flv HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { send(viewer, $0.baseAddress, $0.count, 0) }
        // Until the viewer is counted and two seconds are plotted.
        var stats = "", history: [[String: Any]] = []
        waitUntil(deadline: 4) {
            stats = Network.get(port: port, "/stats")
            let viewers = (try? JSONSerialization.jsonObject(with: Data(body(stats).utf8)) as? [String: Any])?["viewers"] as? [String: Any]
            history = (try? JSONSerialization.jsonObject(with: Data(body(Network.get(port: port, "/history")).utf8))) as? [[String: Any]] ?? []
            return viewers?["count"] as? Int == 1 && history.count >= 2
        }
        XCTAssertTrue(stats.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"), stats)
        let statsLine = body(stats).trimmingCharacters(in: .newlines)
        let viewers = try XCTUnwrap(try object(statsLine)["viewers"] as? [String: Any], statsLine)
        XCTAssertEqual(viewers["count"] as? Int, 1, statsLine)
        XCTAssertEqual((viewers["streams"] as? [String: Int])?["/live.flv"], 1, statsLine)

        // The plotted fields of each second so far, oldest first.
        let historyTimes = history.compactMap { $0["media_time_s"] as? Double }
        XCTAssertEqual(historyTimes.count, history.count)
        XCTAssertGreaterThanOrEqual(history.count, 2, "\(history)")
        XCTAssertEqual(historyTimes, historyTimes.sorted())
        XCTAssertNotNil((history.last?["latency_ms"] as? [String: Any])?["p99"] as? Double, "\(history)")

        // Read until the run ends and the server closes the stream (about 3.5 s of events).
        let stream = Network.exchange(port: port, Array("GET /events HTTP/1.1\r\nHost: x\r\n\r\n".utf8), timeout: 10)
        XCTAssertTrue(stream.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"), stream)
        let lines = try events(stream)
        XCTAssertGreaterThanOrEqual(lines.count, 3, stream)
        XCTAssertLessThanOrEqual(lines.count, 6, "one event a second, not one per loop turn: \(stream)")
        let times = try lines.map { try XCTUnwrap(try object($0)["media_time_s"] as? Double) }
        XCTAssertEqual(times, times.sorted(), "\(times)")
        XCTAssertGreaterThan(times.last! - times.first!, 1.5, "\(times)")

        let file = "\(dir)/answers.jsonl"
        try ([statsLine] + lines).joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let check = try StatsSchemaTests.validate(file, in: dir)
        XCTAssertEqual(check.status, 0, check.stdoutText + check.stderr)
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }

    /// `record --http`: the dashboard for a run, loopback by default, with the browsers' stream
    /// for its live picture (issue 52, item 9) and none of serve's, and not an output of its own
    /// (stopped by SIGTERM once seen: -t leaves room for a sanitizer).
    func testRecordHTTPServesTheDashboardAndItsLivePicture() throws {
        let port = try Network.freePort()
        let out = "\(dir)/r.flv"
        let record = try ServingLivemux(["record", "--http", "\(port)", "-t", "10", "--size", "160x120", "-o", out], directory: dir)
        XCTAssertEqual(record.dashboardURL(), "http://127.0.0.1:\(port)/", record.stderr)
        XCTAssertTrue(record.stderr.contains("browsers play http://127.0.0.1:\(port)/live.mp4 and http://127.0.0.1:\(port)/live.m3u8"),
                      record.stderr)
        var stats = ""
        waitUntil(deadline: 4) {
            stats = Network.get(port: port, "/stats")
            return (try? JSONSerialization.jsonObject(with: Data(body(stats).utf8)) as? [String: Any])?["media_time_s"] as? Double ?? 0 > 0
        }
        XCTAssertTrue(stats.hasPrefix("HTTP/1.1 200 OK"), stats)
        let object = try object(body(stats).trimmingCharacters(in: .newlines))
        XCTAssertGreaterThan(object["media_time_s"] as? Double ?? 0, 0, stats)
        XCTAssertEqual((object["viewers"] as? [String: Any])?["streams"] as? [String: Int], ["/live.mp4": 0], stats)
        XCTAssertTrue(Network.get(port: port, "/live.flv").hasPrefix("HTTP/1.1 404"), "serve's streams are not served")
        XCTAssertTrue(Network.get(port: port, "/live.asf").hasPrefix("HTTP/1.1 404"), "serve's streams are not served")
        let watched = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", "http://127.0.0.1:\(port)/live.mp4", "-t", "2", "-f", "null", "-"],
                                    timeout: 30)
        XCTAssertEqual(watched.status, 0, watched.stderr)
        XCTAssertEqual(watched.stderr, "", "the live picture decodes clean")
        record.stop()
        XCTAssertEqual(record.wait(), 0, record.stderr)
        XCTAssertFalse(record.stderr.contains("serving viewers"), record.stderr)
        XCTAssertEqual(try Tools.probe(out).streams.count, 2)

        let alone = try Tools.livemux(["record", "--http", "\(port)", "-t", "1"])
        XCTAssertEqual(alone.status, 64, alone.stderr)
        XCTAssertTrue(alone.stderr.hasPrefix("error: no output"), alone.stderr)
        let keyless = try Tools.livemux(["record", "--viewer-key", "0123456789abcdef", "-t", "1", "-o", "\(dir)/k.flv"])
        XCTAssertEqual(keyless.status, 64, keyless.stderr)
        XCTAssertTrue(keyless.stderr.hasPrefix("error: --viewer-key is for an HTTP server, and there is none: give --http"), keyless.stderr)
    }

    /// The browsers' stream keeps nothing going: a recording whose one output fails (its listener
    /// takes 3 s and leaves) ends while a browser watches, and `--viewer-key` guards the page and
    /// the stream as it does serve's.
    func testRecordHTTPEndsWithItsLastOutputAndTakesAViewerKey() throws {
        let (port, push) = (try Network.freePort(), try Network.freePort())
        let key = "viewer-key-0123456789"
        let listener = try ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "tcp://127.0.0.1:\(push)?listen=1",
                                                              "-t", "3", "-c", "copy", "\(dir)/pushed.flv"], directory: dir, name: "listener")
        defer { listener.end(signal: SIGKILL) }
        XCTAssertTrue(waitUntil(deadline: 10) { Network.isListening(tcp: push) }, "the listener is up")
        let record = try ServingLivemux(["record", "--http", "\(port)", "--viewer-key", key, "-t", "30", "--size", "160x120",
                                         "--reconnect-attempts", "0", "-f", "flv", "-o", "tcp://127.0.0.1:\(push)"], directory: dir)
        XCTAssertNotNil(record.dashboardURL(), record.stderr)
        XCTAssertTrue(Network.get(port: port, "/stats").hasPrefix("HTTP/1.1 403"), "the key guards the page's requests")
        let viewer = try ChildProcess.background("ffmpeg", ["-nostdin", "-v", "error", "-i", "http://127.0.0.1:\(port)/live.mp4?key=\(key)",
                                                            "-f", "null", "-"], directory: dir, name: "viewer")
        defer { viewer.end(signal: SIGKILL) }
        let started = Date()
        XCTAssertEqual(record.wait(), 1, record.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "it ended with its output, not at -t 30: \(record.stderr)")
        XCTAssertTrue(record.stderr.contains("tcp://127.0.0.1:\(push)"), record.stderr)
        XCTAssertGreaterThan(try Tools.probe("\(dir)/pushed.flv").stream("video")?.packetCount ?? 0, 0, "the push ran before it failed")
    }

    /// The snapshot is the test pattern: SMPTE bars, each bar's colour where it should be, at the
    /// stream's size and at `?width=N`; no snapshot thread until one is asked for.
    func testSnapshotShowsTheTestPattern() throws {
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "4",
                                        "--video", "lavfi:smptebars=size=640x360:rate=30"], directory: dir)
        let port = try port(of: try XCTUnwrap(serve.dashboardURL(), serve.stderr))
        XCTAssertTrue(waitUntil(deadline: 3) { mediaTime(port) > 0 }, "the job runs")
        XCTAssertFalse(threadNames(serve.pid).contains { $0.hasPrefix("livemux-snap") }, "no snapshot thread before one is asked for")
        for (query, width, height) in [("", 640, 360), ("?width=320", 320, 180)] {
            let jpeg = "\(dir)/snap\(width).jpg"
            let fetch = try Tools.run("curl", ["-s", "-o", jpeg, "-w", "%{http_code} %{content_type}", "http://127.0.0.1:\(port)/snapshot.jpg\(query)"])
            XCTAssertEqual(fetch.stdoutText, "200 image/jpeg")
            let probe = try Tools.probe(jpeg)
            XCTAssertEqual(probe.streams.first?.codec_name, "mjpeg")
            XCTAssertEqual(probe.streams.first?.width, width)
            XCTAssertEqual(probe.streams.first?.height, height)
            let rgb = try Tools.run("ffmpeg", ["-v", "error", "-i", jpeg, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout
            XCTAssertEqual(rgb.count, width * height * 3)
            // The seven 75% bars across the top two thirds: gray, yellow, cyan, green, magenta, red, blue.
            let bars: [[Int]] = [[191, 191, 191], [191, 191, 0], [0, 191, 191], [0, 191, 0], [191, 0, 191], [191, 0, 0], [0, 0, 191]]
            for (i, expected) in bars.enumerated() {
                let x = width * (2 * i + 1) / 14, y = height / 4
                let at = (y * width + x) * 3
                let got = (0..<3).map { Int(rgb[at + $0]) }
                for c in 0..<3 { XCTAssertEqual(got[c], expected[c], accuracy: 24, "bar \(i) at \(x),\(y): \(got), not \(expected)") }
            }
        }
        XCTAssertTrue(threadNames(serve.pid).contains { $0.hasPrefix("livemux-snap") }, "the snapshot thread once asked")
        XCTAssertTrue(Network.get(port: port, "/snapshot.jpg?width=7").hasPrefix("HTTP/1.1 400"))
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }

    /// Made at most once a second however many ask: two asks within the second get the same
    /// picture of a moving pattern, one after it a new one.
    func testSnapshotIsMadeAtMostOnceASecond() throws {
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "4", "--size", "320x240"], directory: dir)
        let port = try port(of: try XCTUnwrap(serve.dashboardURL(), serve.stderr))
        XCTAssertTrue(waitUntil(deadline: 3) { mediaTime(port) > 0 }, "the job runs")
        func fetch(_ name: String) throws -> Data {
            let path = "\(dir)/\(name).jpg"
            let r = try Tools.run("curl", ["-s", "-o", path, "-w", "%{http_code}", "http://127.0.0.1:\(port)/snapshot.jpg"])
            XCTAssertEqual(r.stdoutText, "200")
            return try Data(contentsOf: URL(fileURLWithPath: path))
        }
        let asked = Date()
        let first = try fetch("a"), again = try fetch("b")
        XCTAssertEqual(first, again, "the same picture within the second")
        // testsrc2 moves: a new picture once the second is over, and not before.
        XCTAssertTrue(try waitUntil(deadline: 2.5) { try fetch("c") != first }, "a new picture after the second")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(asked), 0.9, "not within the second")
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }

    /// The page in headless Chromium (scripts/browser, through Selenium): after its
    /// script ran, its values are the stream's and they move between two loads, the snapshot
    /// loaded at the width asked, the live picture took its place and shows the SMPTE bars where
    /// the page placed it (read from the screenshot), each audio source's level shows, and neither
    /// the console nor the page's own error box has an error. The second
    /// load's screenshot is kept in .build/artefacts/DashboardTests/.
    func testThePageWorksInChromium() throws {
        try Browser.skipUnlessAvailable()
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "30",
                                        "--video", "lavfi:smptebars=size=640x360:rate=30",
                                        "--audio", "lavfi:sine", "--audio", "lavfi:sine=frequency=1000,volume=0.25"], directory: dir)
        let page = try XCTUnwrap(serve.dashboardURL(), serve.stderr)
        let artefacts = Tools.packageRoot.appendingPathComponent(".build/artefacts/DashboardTests").path
        try FileManager.default.createDirectory(atPath: artefacts, withIntermediateDirectories: true)
        let screenshot = "\(artefacts)/dashboard.png"
        try? FileManager.default.removeItem(atPath: screenshot)
        var times: [Double] = []
        var picture: [String: Double] = [:]
        for load in 0..<2 {
            let dom = "\(dir)/dom\(load).html"
            // The picture shown: the live video once it plays, in the snapshot's place (issue 52, item 9).
            let shown = "(document.getElementById('picture-section').hidden ? document.getElementById('live') : document.getElementById('snapshot'))"
            let rect = "JSON.stringify(\(shown).getBoundingClientRect())"
            let browser = try Browser.open(page, ["--seconds", "3", "--dom", dom, "--eval", rect, "--eval", "window.livePlayer.firstFrameMs",
                                                  "--eval", "document.getElementById('picture-section').hidden"]
                                           + (load == 1 ? ["--screenshot", screenshot] : []))
            XCTAssertEqual(browser.status, 0, browser.stderr)
            XCTAssertEqual(browser.console, [], "console messages or script errors")
            XCTAssertNotNil(try browser.value(1) as? Int, "the live picture plays: \(browser.evals)")
            XCTAssertEqual(try browser.value(2) as? Bool, true, "and the snapshot's panel has gone: \(browser.evals)")
            // The value is a string holding the rectangle's JSON.
            let rectText = try XCTUnwrap(try browser.value(0) as? String, "\(browser.evals)")
            picture = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(rectText.utf8)) as? [String: Double], rectText)
            let html = try String(contentsOfFile: dom, encoding: .utf8)
            XCTAssertTrue(html.contains(#"<pre id="errors"></pre>"#), "the page's error box: \(html)")
            XCTAssertTrue(html.contains(#"data-natural-width="640""#), "the snapshot loaded: \(html)")
            XCTAssertTrue(html.contains(#"<span id="connection" class="live">live</span>"#), html)
            let media = try XCTUnwrap(html.firstMatch(of: /data-stat="media_time_s">([0-9.]+)</)?.1, html)
            times.append(try XCTUnwrap(Double(media)))
            // The page's own video is a viewer of /live.mp4.
            XCTAssertNotNil(html.firstMatch(of: /data-stat="viewers.count">1</), "the viewers: \(html)")
            let videoRate = html.firstMatch(of: /data-stat="video.bitrate_kbps">([0-9.]+)</).flatMap { Double($0.1) }
            XCTAssertGreaterThan(videoRate ?? 0, 0, "video bit rate: \(html)")
            if load == 1 {
                // Each audio source's level: the tone at −18.1 dBFS, the other 12 dB under it.
                let levels = html.matches(of: /data-stat="sources.peak_dbfs">(-?[0-9.]+) dBFS</).compactMap { Double($0.1) }
                XCTAssertEqual(levels.count, 2, "audio levels: \(html)")
                for (level, expected) in zip(levels, [-18.1, -30.1]) { XCTAssertEqual(level, expected, accuracy: 0.5) }
            }
        }
        XCTAssertGreaterThan(times[1], times[0] + 1, "the values move: \(times)")

        // The live picture as the browser drew it: the seven bars' colours across its top.
        let shot = try Tools.run("ffmpeg", ["-v", "error", "-i", screenshot, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout
        let shotWidth = 1280  // scripts/browser's default --size 1280x900
        XCTAssertEqual(shot.count, shotWidth * 900 * 3, "the screenshot: \(screenshot)")
        let (left, top, width, height) = (picture["x"] ?? 0, picture["y"] ?? 0, picture["width"] ?? 0, picture["height"] ?? 0)
        XCTAssertGreaterThan(width, 300, "\(picture)")
        let bars: [[Int]] = [[191, 191, 191], [191, 191, 0], [0, 191, 191], [0, 191, 0], [191, 0, 191], [191, 0, 0], [0, 0, 191]]
        for (i, expected) in bars.enumerated() {
            let x = Int(left + width * Double(2 * i + 1) / 14), y = Int(top + height / 4)
            let at = (y * shotWidth + x) * 3
            guard at + 2 < shot.count else { return XCTFail("\(x),\(y) is off the screenshot") }
            let got = (0..<3).map { Int(shot[at + $0]) }
            for c in 0..<3 { XCTAssertEqual(got[c], expected[c], accuracy: 30, "bar \(i) at \(x),\(y) of \(screenshot): \(got)") }
        }
    }

    /// The names of a process's threads (`/proc/PID/task/*/comm`).
    private func threadNames(_ pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }
    /// The audio-level panel lists audio sources only, and a long source name (PulseAudio's
    /// `alsa_input.pci-0000_00_1f.3.analog-stereo` and longer) stays inside its box, cut with an
    /// ellipsis and whole in its tooltip (issue 42, item 1: the name overflowed the box and the
    /// video source was listed among the levels).
    func testTheAudioLevelsListAudioOnlyAndLongNamesStayInTheirBox() throws {
        try Browser.skipUnlessAvailable()
        let long = "lavfi:sine=frequency=440:sample_rate=48000:beep_factor=0:samples_per_frame=1024,aformat=channel_layouts=stereo,volume=0.5"
        let serve = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "-t", "30", "--size", "320x240", "--audio", long], directory: dir)
        let page = try XCTUnwrap(serve.dashboardURL(), serve.stderr)
        let table = "document.getElementById('sources')"
        let browser = try Browser.open(page, ["--wait", "#sources td", "--seconds", "1",
                                              "--eval", "\(table).rows.length",
                                              "--eval", "\(table).rows[0].cells[0].textContent",
                                              "--eval", "\(table).rows[0].cells[0].title",
                                              "--eval", "\(table).scrollWidth <= document.getElementById('sources-section').clientWidth",
                                              "--eval", "\(table).getBoundingClientRect().right <= document.getElementById('sources-section').getBoundingClientRect().right"])
        XCTAssertEqual(browser.status, 0, browser.stderr)
        XCTAssertEqual(try browser.value(0) as? Int, 1, "one audio source, and no video source among the levels")
        XCTAssertEqual(try browser.value(1) as? String, "a0 " + long)
        XCTAssertEqual(try browser.value(2) as? String, long, "the whole name in the tooltip")
        XCTAssertEqual(try browser.value(3) as? Bool, true, "the table is no wider than its box")
        XCTAssertEqual(try browser.value(4) as? Bool, true, "and ends inside it")
        serve.stop()
        XCTAssertEqual(serve.wait(), 0, serve.stderr)
    }
}
