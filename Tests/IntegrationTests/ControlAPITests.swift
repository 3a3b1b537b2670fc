import Foundation
import XCTest

/// The control API and `livemux ctl` (issue 39, items 2 and 3): a running recording changed
/// through `/api` — a source muted and its volume set, an output's bit rate — with its own key,
/// bad requests refused with nothing changed, and the other outputs unaffected.
final class ControlAPITests: TemporaryDirectoryTestCase {
    var key = ""
    var keyFile = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        key = (0..<32).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
        keyFile = "\(dir)/control.key"
        try (key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)
    }

    /// A request to the job's server; the status code and the JSON body.
    func call(_ port: Int, _ method: String, _ path: String, body: String = "", key: String? = nil) -> (status: Int, json: [String: Any]) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n"
        if let key = key ?? Optional(self.key), !key.isEmpty { head += "Authorization: Bearer \(key)\r\n" }
        let reply = Network.exchange(port: port, Array((head + "\r\n" + body).utf8))
        let status = Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
        let json = reply.range(of: "\r\n\r\n").flatMap { try? JSONSerialization.jsonObject(with: Data(reply[$0.upperBound...].utf8)) } as? [String: Any]
        return (status, json ?? [:])
    }

    /// The port of the job's server, from the dashboard URL it printed.
    func port(_ job: ServingLivemux) throws -> Int {
        let url = try XCTUnwrap(job.dashboardURL(), job.stderr)
        return try XCTUnwrap(URLComponents(string: url)?.port)
    }

    func mediaTime(_ port: Int) -> Double { call(port, "GET", "/api").json["media_time_s"] as? Double ?? -1 }
    /// The media time of the newest frame the video encoder placed: where a change made now is
    /// due to show, a frame or two on.
    func placedTime(_ port: Int) -> Double { call(port, "GET", "/api").json["placed_time_s"] as? Double ?? -1 }

    /// Slack past the media time waited for, in wall seconds: the start, a busy machine.
    static let mediaWaitSlack = 10.0

    /// Waits until the job has recorded `seconds` of media; a failure if it never does.
    func waitForMedia(_ port: Int, _ seconds: Double, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(waitUntil(deadline: seconds + Self.mediaWaitSlack) { mediaTime(port) >= seconds },
                      "the job reached \(seconds) s of media", file: file, line: line)
    }

    /// a1 (1 kHz) muted 2 s in, a0 (440 Hz) to a quarter 4 s in, a1 back 6 s in: each shows in
    /// the recording from the media time the API reported when it answered, within 0.2 s; both
    /// outputs get the same mix and keep every frame.
    func testSourcesAreMutedAndTurnedDownWhileRecording() throws {
        let (a, b) = ("\(dir)/a.flv", "\(dir)/b.asf")
        let stats = "\(dir)/stats.jsonl"
        let job = try ServingLivemux(["record", "-q", "-t", "9", "--http", "127.0.0.1:0", "--control-key-file", keyFile, "--stats", stats,
                                      "--audio", "lavfi:sine=frequency=440", "--audio", "lavfi:sine=frequency=1000",
                                      "--size", "320x240", "-o", a, "-o", b], directory: dir)
        let port = try port(job)
        var changes: [String: Double] = [:], placed: [String: Double] = [:]
        for (name, at, path, body) in [("mute", 2.0, "/api/sources/a1", #"{"mute": true}"#),
                                       ("quarter", 4.0, "/api/sources/a0", #"{"volume": 0.25}"#),
                                       ("unmute", 6.0, "/api/sources/a1", #"{"mute": false}"#)] {
            waitForMedia(port, at)
            let answer = call(port, "PATCH", path, body: body)
            XCTAssertEqual(answer.status, 200, "\(answer.json)")
            placed[name] = placedTime(port)
            changes[name] = mediaTime(port)
        }
        let sources = try XCTUnwrap(call(port, "GET", "/api").json["sources"] as? [[String: Any]])
        XCTAssertEqual(sources.first { $0["id"] as? String == "a0" }?["volume"] as? Double, 0.25)
        XCTAssertEqual(sources.first { $0["id"] as? String == "a1" }?["mute"] as? Bool, false)
        // Every change shows on the dashboard's /stats (and /events), and in --stats.
        let said = { (json: [String: Any]?) in
            ((json?["changes"] as? [[String: Any]]) ?? []).map { "\($0["target"] ?? "") \($0["setting"] ?? "") \($0["value"] ?? "")" }
        }
        let expected = ["a1 mute 1", "a0 volume 0.25", "a1 mute 0"]
        // The dashboard samples the job once a second.
        var page: [String] = []
        waitUntil(deadline: 2.5) {
            let reply = Network.get(port: port, "/stats")
            page = said(reply.range(of: "\r\n\r\n").flatMap { try? JSONSerialization.jsonObject(with: Data(reply[$0.upperBound...].utf8)) } as? [String: Any])
            return page == expected
        }
        XCTAssertEqual(page, expected, "/stats")
        XCTAssertEqual(job.wait(), 0, job.stderr)
        let lines = try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n")
        let final = try XCTUnwrap(lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any])
        XCTAssertEqual(said(final), expected)
        for path in [a, b] {
            XCTAssertEqual(try Tools.decodeErrors(path), "", path)
            XCTAssertEqual(try Tools.probe(path).stream("video")?.packetCount, 270, "\(path): every frame, none dropped or repeated")
            let samples = try MediaAnalysis.samples(path)
            let window = 0.05
            let high = MediaAnalysis.amplitudes(of: 1000, in: samples, window: window)
            let low = MediaAnalysis.amplitudes(of: 440, in: samples, window: window)
            let at = { (t: Double) in Int(t / window) }
            let (mute, quarter, unmute) = (changes["mute"]!, changes["quarter"]!, changes["unmute"]!)
            // The first window where each change shows, against the media time of the answer.
            let muted = Double(try XCTUnwrap((at(1)..<high.count).first { high[$0] < high[at(1)] * 0.1 })) * window
            let turned = Double(try XCTUnwrap((at(mute + 0.5)..<low.count).first { low[$0] < low[at(1)] * 0.4 })) * window
            let back = Double(try XCTUnwrap((at(mute + 0.5)..<high.count).first { high[$0] > high[at(1)] * 0.5 })) * window
            print("control, \(path): mute answered at \(mute) s (placed \(placed["mute"]!)), shows at \(muted) s; volume at \(quarter)"
                  + " (placed \(placed["quarter"]!)), shows at \(turned); unmute at \(unmute) (placed \(placed["unmute"]!)), shows at \(back)")
            for (asked, shown) in [(mute, muted), (quarter, turned), (unmute, back)] {
                XCTAssertEqual(shown, asked, accuracy: 0.2, "\(path): a change shows where it was answered")
            }
            // Issue 39: within 2 frame intervals (30 fps) of the frame being encoded at the answer,
            // read to 10 ms windows (a 50 ms window half changed is not yet below the threshold),
            // give or take the window. Measured 13–57 ms in 4 runs.
            let fine = 0.01
            let fineHigh = MediaAnalysis.amplitudes(of: 1000, in: samples, window: fine)
            let fineLow = MediaAnalysis.amplitudes(of: 440, in: samples, window: fine)
            let first = { (amplitudes: [Double], after: Double, test: (Double) -> Bool) -> Double in
                Double((Int(after / fine)..<amplitudes.count).first { test(amplitudes[$0]) } ?? amplitudes.count) * fine
            }
            let onsets = [("mute", first(fineHigh, placed["mute"]! - 0.1) { $0 < high[at(1)] * 0.1 }),
                          ("quarter", first(fineLow, placed["quarter"]! - 0.1) { $0 < low[at(1)] * 0.4 }),
                          ("unmute", first(fineHigh, placed["unmute"]! - 0.1) { $0 > high[at(1)] * 0.5 })]
            print("control, \(path): to 10 ms, after the frame placed at the answer: \(onsets.map { "\($0.0) \(String(format: "%+.0f", ($0.1 - placed[$0.0]!) * 1000)) ms" })")
            for (name, shown) in onsets {
                XCTAssertLessThanOrEqual(shown - placed[name]!, 2.0 / 30 + fine, "\(path): \(name) within 2 frames of the answer")
            }
            XCTAssertEqual(low[at(3)] / low[at(5)], 4, accuracy: 0.4, "\(path): a quarter of the volume")
        }
    }

    /// An output with an encode of its own goes from 1 Mbit/s to 300 kbit/s; the other output
    /// keeps 2 Mbit/s and every frame. One that shares its encode is refused, changing nothing.
    func testAnOutputsBitRateChangesAndTheOtherOutputKeepsItsOwn() throws {
        let (a, b, c) = ("\(dir)/a.flv", "\(dir)/b.flv", "\(dir)/c.flv")
        let job = try ServingLivemux(["record", "-q", "-t", "10", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "640x360", "--vbitrate", "2M", "-o", a, "--vbitrate", "1M", "-o", b, "--vbitrate", "2M", "-o", c], directory: dir)
        let port = try port(job)
        waitForMedia(port, 4)
        let shared = call(port, "PATCH", "/api/outputs/o0", body: #"{"vbitrate": "500k"}"#)
        XCTAssertEqual(shared.status, 409, "\(shared.json)")
        XCTAssertTrue((shared.json["error"] as? String ?? "").contains("shares its video encode with o2"), "\(shared.json)")
        let answer = call(port, "PATCH", "/api/outputs/o1", body: #"{"vbitrate": 300000}"#)
        XCTAssertEqual(answer.status, 200, "\(answer.json)")
        XCTAssertEqual((answer.json["settings"] as? [String: Any])?["vbitrate"] as? Int, 300_000)
        XCTAssertEqual(job.wait(), 0, job.stderr)
        let rates = { (path: String) in try BackupRecordingTests.videoKbps(path) }
        let (kept, changed) = (try rates(a), try rates(b))
        print("control, bit rate: o0 \(kept.sorted { $0.key < $1.key }), o1 \(changed.sorted { $0.key < $1.key }) kbit/s per 2 s")
        for (window, rate) in kept { XCTAssertEqual(rate, 2000, accuracy: 400, "o0 window \(window) s") }
        XCTAssertEqual(try XCTUnwrap(changed[2]), 1000, accuracy: 200, "o1 before the change")
        XCTAssertEqual(try XCTUnwrap(changed[6]), 300, accuracy: 60, "o1 after the change")
        XCTAssertEqual(try XCTUnwrap(changed[8]), 300, accuracy: 60, "o1 after the change")
        for path in [a, b, c] {
            XCTAssertEqual(try Tools.probe(path).stream("video")?.packetCount, 300, path)
            XCTAssertEqual(try Tools.decodeErrors(path), "", path)
        }
    }

    /// Without the key 401, a wrong key or a viewer key 403, a bad request 400 naming its field,
    /// an unknown source 404: none changes anything. Without --control-key-file there is no API.
    func testRequestsWithoutTheKeyOrWithBadFieldsChangeNothing() throws {
        let viewerKeyFile = "\(dir)/viewer.key"
        try "viewer-key-0123456789\n".write(toFile: viewerKeyFile, atomically: true, encoding: .utf8)
        chmod(viewerKeyFile, 0o600)
        let job = try ServingLivemux(["serve", "-q", "--listen", "127.0.0.1:0", "--viewer-key-file", viewerKeyFile,
                                      "--control-key-file", keyFile, "--size", "320x240", "-t", "30"], directory: dir)
        let url = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let port = try XCTUnwrap(URLComponents(string: url)?.port)
        let before = try XCTUnwrap(call(port, "GET", "/api").json["sources"] as? [[String: Any]])
        XCTAssertEqual(call(port, "GET", "/api", key: "").status, 401)
        XCTAssertEqual(call(port, "GET", "/api?key=viewer-key-0123456789", key: "").status, 401, "a viewer key is no control key")
        XCTAssertEqual(call(port, "PATCH", "/api/sources/a0", body: #"{"mute": true}"#, key: "viewer-key-0123456789").status, 403)
        XCTAssertEqual(call(port, "PATCH", "/api/sources/a0", body: #"{"mute": true}"#, key: String(key.reversed())).status, 403)
        for (body, field) in [(#"{"mute": true, "loud": 1}"#, "loud"), (#"{"mute": 1}"#, "mute"), (#"{"volume": -1}"#, "volume"),
                              (#"{"volume": "half"}"#, "volume")] {
            let answer = call(port, "PATCH", "/api/sources/a0", body: body)
            XCTAssertEqual(answer.status, 400, body)
            XCTAssertEqual(answer.json["field"] as? String, field, "\(answer.json)")
        }
        // Bit rates past Int's range: once a trap in `Int(_:)` that ended the job (a CI fuzz run).
        for rate in ["-1e308", "1e308", #""1e300k""#, "-9223372036854775809"] {
            let answer = call(port, "POST", "/api/outputs", body: #"{"output": "\#(dir)/x.flv", "vbitrate": \#(rate)}"#)
            XCTAssertEqual(answer.status, 400, rate)
            XCTAssertEqual(answer.json["field"] as? String, "vbitrate", "\(answer.json)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/x.flv"))
        XCTAssertEqual(call(port, "PATCH", "/api/sources/a0", body: "not json").status, 400)
        XCTAssertEqual(call(port, "PATCH", "/api/sources/a7", body: #"{"mute": true}"#).status, 404)
        XCTAssertEqual(call(port, "POST", "/api/segments/cut").status, 409, "nothing is cut into segments")
        XCTAssertEqual(call(port, "DELETE", "/api").status, 405)
        XCTAssertNil(call(port, "DELETE", "/api").json["field"], "a method names no field (issue 52, item 11)")
        let after = try XCTUnwrap(call(port, "GET", "/api").json["sources"] as? [[String: Any]])
        XCTAssertEqual(after.map { $0["mute"] as? Bool }, before.map { $0["mute"] as? Bool })
        XCTAssertEqual(after.map { $0["volume"] as? Double }, before.map { $0["volume"] as? Double })
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)

        let plain = try ServingLivemux(["serve", "-q", "--listen", "127.0.0.1:0", "--size", "320x240", "-t", "30"], directory: dir)
        let plainURL = try XCTUnwrap(plain.dashboardURL(), plain.stderr)
        XCTAssertEqual(call(try XCTUnwrap(URLComponents(string: plainURL)?.port), "GET", "/api").status, 404, "no key file, no API")
        plain.stop()
        XCTAssertEqual(plain.wait(), 0, plain.stderr)
    }

    /// `livemux ctl` drives the same API: list, mute, a refusal as one error line and exit 1.
    func testCtlListsMutesAndSaysWhyARequestWasRefused() throws {
        let job = try ServingLivemux(["record", "-q", "-t", "30", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "320x240", "-o", "\(dir)/a.flv"], directory: dir)
        let url = try XCTUnwrap(job.dashboardURL(), job.stderr)
        let ctl = { (words: [String]) in try Tools.livemux(["ctl", "--url", url, "--key-file", self.keyFile] + words) }
        let list = try ctl(["list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        let job0 = try XCTUnwrap(try JSONSerialization.jsonObject(with: list.stdout) as? [String: Any])
        // JSON a person reads on a terminal (issue 52, item 11): indented, slashes as they are.
        XCTAssertTrue(list.stdoutText.contains("\n  \"layout\""), list.stdoutText)
        XCTAssertFalse(list.stdoutText.contains(#"\/"#), list.stdoutText)
        XCTAssertEqual((job0["outputs"] as? [[String: Any]])?.first?["target"] as? String, "\(dir)/a.flv")
        let mute = try ctl(["mute", "a0"])
        XCTAssertEqual(mute.status, 0, mute.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: mute.stdout) as? [String: Any])?["mute"] as? Bool, true)
        let added = try ctl(["outputs", "add", "\(dir)/b.flv", "--vbitrate", "300k", "--size", "160x120"])
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: added.stdout) as? [String: Any])?["id"] as? String, "o1")
        // o1 records a second and a half of media before it is removed.
        let port = try XCTUnwrap(URLComponents(string: url)?.port)
        waitForMedia(port, mediaTime(port) + 1.5)
        let removed = try ctl(["outputs", "remove", "o1"])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        let again = try ctl(["outputs", "add", "\(dir)/b.flv"])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.hasPrefix("error: \(dir)/b.flv exists: give \"overwrite\": true"), again.stderr)
        let main = try ctl(["main", "v0"])
        XCTAssertEqual(main.stderr, "error: the job has one video source: there is no layout to change (HTTP 409)\n")
        let tone = try ctl(["sources", "add", "--audio", "lavfi:sine=frequency=1000"])
        XCTAssertEqual(tone.status, 0, tone.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: tone.stdout) as? [String: Any])?["id"] as? String, "a1")
        let badOption = try ctl(["sources", "add", "--video", "lavfi:testsrc2", "--opt", "no_such_option=1"])
        XCTAssertEqual(badOption.status, 1)
        XCTAssertTrue(badOption.stderr.hasPrefix("error: lavfi:testsrc2 does not open: "), badOption.stderr)
        XCTAssertEqual(try ctl(["sources", "add", "--video"]).status, 64)
        let fileReconnect = try ctl(["reconnect", "o0"])
        XCTAssertEqual(fileReconnect.stderr, "error: o0 is not a URL output: it has no connection (HTTP 409)\n")
        let refused = try ctl(["vbitrate", "o5", "1M"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "error: no output o5: the outputs are o0, o1 (HTTP 404)\n")
        let small = try XCTUnwrap(try Tools.probe("\(dir)/b.flv").stream("video"))
        XCTAssertEqual([small.width, small.height], [160, 120])
        XCTAssertEqual(try Tools.decodeErrors("\(dir)/b.flv"), "")
        let unreachable = try Tools.livemux(["ctl", "--url", "http://127.0.0.1:\(try Network.freePort())/", "--key-file", keyFile, "list"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertTrue(unreachable.stderr.hasPrefix("error: cannot reach "), unreachable.stderr)
        XCTAssertEqual(try Tools.livemux(["ctl", "--key-file", keyFile, "shout"]).status, 64)
        let none = try Tools.livemux(["ctl", "--key-file", keyFile])
        XCTAssertTrue(none.stderr.contains("sources"), "every command is named: \(none.stderr)")
        // A job without --control-key-file: said so, and how to start one.
        let plain = try ServingLivemux(["serve", "-q", "--listen", "127.0.0.1:0", "-t", "30", "--size", "160x120"], directory: dir)
        let plainURL = try XCTUnwrap(plain.dashboardURL(), plain.stderr)
        let noAPI = try Tools.livemux(["ctl", "--url", plainURL, "--key-file", keyFile, "list"])
        XCTAssertEqual(noAPI.status, 1)
        XCTAssertEqual(noAPI.stderr, "error: the job at \(plainURL) has no control API: start it with --control-key-file FILE (record: with --http HOST:PORT too)\n")
        plain.stop()
        XCTAssertEqual(plain.wait(), 0, plain.stderr)
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)
    }

    /// The first video packet of a file: a keyframe at 0; the file's frames, duration and size.
    func startsClean(_ path: String) throws -> (frames: Int, seconds: Double, width: Int?) {
        let p = try Tools.probe(path, packets: true)
        let video = try XCTUnwrap(p.stream("video"), path)
        let first = try XCTUnwrap(p.packets?.first { $0.stream_index == video.index }, path)
        XCTAssertTrue(first.flags.hasPrefix("K"), "\(path) starts with a keyframe")
        XCTAssertEqual(Double(first.dts_time ?? "") ?? -1, 0, accuracy: 0.02, "\(path) starts at 0")
        XCTAssertEqual(try Tools.decodeErrors(path), "", path)
        return (video.packetCount, try XCTUnwrap(p.format.seconds), video.width)
    }

    /// Two files added 2 s in — one at the recording's settings (it shares the encode), one at
    /// its own size and bit rates — and the second removed 6 s in with a file given at the start:
    /// each starts with a keyframe at 0 and decodes clean, the removed ones are complete, and the
    /// first output keeps every frame.
    func testOutputsAddedAndRemovedWhileRecording() throws {
        let (a, given, b, c) = ("\(dir)/a.flv", "\(dir)/given.flv", "\(dir)/b.flv", "\(dir)/c.asf")
        let job = try ServingLivemux(["record", "-q", "-t", "10", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "640x360", "-o", a, "-o", given], directory: dir)
        let port = try port(job)
        waitForMedia(port, 2)
        let added = mediaTime(port)
        let shared = call(port, "POST", "/api/outputs", body: #"{"output": "\#(b)"}"#)
        XCTAssertEqual(shared.status, 201, "\(shared.json)")
        XCTAssertEqual(shared.json["id"] as? String, "o2")
        let own = call(port, "POST", "/api/outputs", body: #"{"output": "\#(c)", "size": "320x240", "vbitrate": "300k", "abitrate": 64000}"#)
        XCTAssertEqual(own.status, 201, "\(own.json)")
        XCTAssertEqual(own.json["id"] as? String, "o3")
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(dir)/theirs.flv", contents: Data("someone's".utf8)))
        for (body, field) in [(#"{"output": "\#(a)"}"#, "output"), (#"{"output": "\#(dir)/theirs.flv"}"#, "overwrite"), (#"{"output": "rtmp://127.0.0.1/live/k", "format": "asf"}"#, "format"),
                              (#"{"output": "x.mp4"}"#, "format"), (#"{"output": "\#(dir)/d.flv", "size": "641x360"}"#, "size"),
                              (#"{"output": "\#(dir)/d.flv", "sharpness": 2}"#, "sharpness")] {
            let refused = call(port, "POST", "/api/outputs", body: body)
            XCTAssertEqual(refused.status, 400, body)
            XCTAssertEqual(refused.json["field"] as? String, field, "\(refused.json)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/d.flv"), "a refused output creates nothing")
        XCTAssertEqual(FileManager.default.contents(atPath: "\(dir)/theirs.flv"), Data("someone's".utf8), "and changes nothing")
        waitForMedia(port, 6)
        let removed = mediaTime(port)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o3").status, 200)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o1").status, 200, "given at the start")
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o1").status, 409, "already ending")
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o9").status, 404)
        var state = ""
        waitUntil(deadline: 3) {
            let outputs = call(port, "GET", "/api").json["outputs"] as? [[String: Any]] ?? []
            state = outputs.filter { ["o1", "o3"].contains($0["id"] as? String) }.compactMap { $0["state"] as? String }.joined(separator: " ")
            return state == "finished finished"
        }
        XCTAssertEqual(state, "finished finished", "the removed outputs are complete")
        XCTAssertEqual(job.wait(), 0, job.stderr)
        let first = try startsClean(a)
        XCTAssertEqual(first.frames, 300, "the first output keeps every frame")
        let second = try startsClean(b)
        XCTAssertEqual(second.seconds, 10 - added, accuracy: 0.3, "b from when it was added")
        let third = try startsClean(c)
        XCTAssertEqual(third.width, 320)
        XCTAssertEqual(third.seconds, removed - added, accuracy: 0.3, "c from when it was added to when it was removed")
        XCTAssertEqual(try PerOutputEncodeTests.kbps(c, "video"), 300, accuracy: 60, "c holds its own bit rate")
        XCTAssertEqual(try PerOutputEncodeTests.kbps(c, "audio"), 64, accuracy: 13)
        XCTAssertEqual(try startsClean(given).seconds, removed, accuracy: 0.3, "the file given at the start, to when it was removed")
        print("control, live outputs: added at \(added) s, removed at \(removed) s; b \(second.seconds) s, c \(third.seconds) s")
    }

    /// Issue 52, items 1 and 2: an output added with "overwrite" is refused (400, field "output")
    /// for every file the job reads or writes — its control key, an input, --stats, the segment
    /// list, its own log, the segment being written and one still to come — and none of them
    /// changes: the job records on and every segment is its own.
    func testAnAddedOutputNeverWritesTheJobsOwnFiles() throws {
        let input = "\(dir)/in.mp4", stats = "\(dir)/st.jsonl", list = "\(dir)/seg.ffconcat", pattern = "\(dir)/seg-%03d.flv"
        let made = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi", "-i", "sine",
                                            "-t", "12", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", input])
        XCTAssertEqual(made.status, 0, made.stderr)
        let job = try ServingLivemux(["record", "-q", "-t", "7", "--http", "127.0.0.1:0", "--control-key-file", keyFile, "--video", input,
                                      "--segment-time", "2", "--segment-list", list, "--stats", stats, "-o", pattern], directory: dir)
        let port = try port(job)
        waitForMedia(port, 1)
        let before = try [keyFile, input].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        for path in [keyFile, input, stats, list, job.logPath, "\(dir)/seg-000.flv", "\(dir)/seg-002.flv", "\(dir)/./seg-003.flv"] {
            let refused = call(port, "POST", "/api/outputs", body: #"{"output": "\#(path)", "format": "flv", "overwrite": true}"#)
            XCTAssertEqual(refused.status, 400, "\(path): \(refused.json)")
            XCTAssertEqual(refused.json["field"] as? String, "output", "\(path): \(refused.json)")
        }
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertEqual(try [keyFile, input].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }, before, "the key and the input are as they were")
        XCTAssertFalse(job.stderr.contains("FLV"), "the log is text: \(job.stderr.prefix(200))")
        for line in try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n") {
            XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(line.utf8)), "--stats holds JSON lines only: \(line.prefix(80))")
        }
        let listed = try String(contentsOfFile: list, encoding: .utf8)
        XCTAssertTrue(listed.hasPrefix("ffconcat version 1.0"), listed)
        var seconds = 0.0
        for i in 0..<3 {
            let segment = "\(dir)/seg-00\(i).flv"
            XCTAssertTrue(listed.contains("seg-00\(i).flv"), listed)
            XCTAssertEqual(try Tools.decodeErrors(segment), "", segment)
            let duration = try XCTUnwrap(try Tools.probe(segment).format.seconds, segment)
            XCTAssertEqual(duration, 2, accuracy: 0.3, "\(segment) holds its own 2 s, nothing else")
            seconds += duration
        }
        XCTAssertEqual(seconds, 6, accuracy: 0.5)
    }

    /// Issue 49, item 3: a source whose open hangs (a PulseAudio stand-in that accepts and never
    /// answers, as a daemon half started does) holds up no viewer: while the request waits,
    /// /stats answers within 0.5 s and a /live.flv viewer keeps receiving with no gap over 200 ms;
    /// after --device-timeout the request gets 504 naming the field, with one warning, and the
    /// job goes on. Before, the HTTP loop opened the source itself and froze.
    func testASourceWhoseOpenHangsHoldsUpNoViewer() throws {
        let socketPath = "\(dir)/hanging-pulse"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socketPath.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(listener, 8), 0)  // connections complete in the backlog; nothing ever answers
        let job = try ServingLivemux(["serve", "--listen", "127.0.0.1:0", "--control-key-file", keyFile, "--device-timeout", "3",
                                      "--size", "320x240", "-t", "12"], directory: dir,
                                     environment: ["PULSE_SERVER": "unix:\(socketPath)", "XDG_RUNTIME_DIR": dir, "HOME": dir])
        let port = try port(job)
        waitForMedia(port, 1)
        // A viewer, reading on its own thread: when each read returned.
        let viewer = Network.connect(port: port)
        XCTAssertGreaterThanOrEqual(viewer, 0)
        defer { close(viewer) }
        _ = Array("GET /live.flv HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8).withUnsafeBytes { send(viewer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let seen = Seen()
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while buffer.withUnsafeMutableBytes({ recv(viewer, $0.baseAddress, $0.count, 0) }) > 0 {
                seen.lock.withLock { seen.arrivals.append(Date()) }
            }
        }
        reader.start()
        let asked = Date()
        let post = Array("POST /api/sources HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\nContent-Length: 26\r\n\r\n{\"audio\": \"pulse:default\"}".utf8)
        let request = Thread {
            let reply = Network.exchange(port: port, post, timeout: 20)
            seen.lock.withLock { seen.reply = reply }
        }
        request.start()
        var statsSeconds: [Double] = []
        while !request.isFinished && Date().timeIntervalSince(asked) < 10 {
            let t = Date()
            XCTAssertTrue(Network.get(port: port, "/stats").hasPrefix("HTTP/1.1 200"), "/stats during the open")
            statsSeconds.append(Date().timeIntervalSince(t))
            Thread.sleep(forTimeInterval: 0.2)  // about as often as a dashboard asks, several times a second
        }
        waitUntil(deadline: 20) { request.isFinished }
        let answered = Date()
        let reply = seen.lock.withLock { seen.reply }
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 504"), reply)
        XCTAssertTrue(reply.contains(#""field":"audio""#), reply)
        XCTAssertEqual(answered.timeIntervalSince(asked), 3, accuracy: 1.5, "given up after --device-timeout")
        XCTAssertGreaterThan(statsSeconds.count, 5)
        XCTAssertLessThan(statsSeconds.max() ?? 99, 0.5, "/stats answered within 0.5 s while the source opened: \(statsSeconds)")
        let during = seen.lock.withLock { seen.arrivals.filter { $0 >= asked && $0 <= answered } }
        let gaps = zip([asked] + during, during + [answered]).map { $1.timeIntervalSince($0) }
        XCTAssertLessThan(gaps.max() ?? 99, 0.2, "the viewer kept receiving: \(during.count) reads, longest gap \(gaps.max() ?? 99) s")
        let sources = try XCTUnwrap(call(port, "GET", "/api").json["sources"] as? [[String: Any]])
        XCTAssertEqual(sources.map { $0["id"] as? String ?? "" }, ["v0", "a0"], "nothing was added")
        job.stop()
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertEqual(job.stderr.components(separatedBy: "did not open in 3 s").count - 1, 1, "one warning: \(job.stderr)")
        print("control, hanging open: answered \(reply.prefix(12)) after \(String(format: "%.2f", answered.timeIntervalSince(asked))) s;"
              + " /stats at most \(String(format: "%.3f", statsSeconds.max() ?? 0)) s over \(statsSeconds.count) asks;"
              + " viewer's longest gap \(String(format: "%.3f", gaps.max() ?? 0)) s over \(during.count) reads")
    }

    /// Issue 52, item 6: with segments on, an output added live follows the command line's rules:
    /// a numbered name is cut into segments of its own (it was written as one file named
    /// `side-%03d.flv`), which --segment-list leaves out; a plain name is refused as -o's is.
    /// Item 12: a segment opened after `vbitrate` says the new rate in its metadata.
    func testAnOutputAddedWhileSegmentsAreOnIsCut() throws {
        let list = "\(dir)/seg.ffconcat"
        let job = try ServingLivemux(["record", "-q", "-t", "7", "--http", "127.0.0.1:0", "--control-key-file", keyFile, "--size", "320x240",
                                      "--segment-time", "2", "--segment-list", list, "-o", "\(dir)/seg-%03d.flv"], directory: dir)
        let port = try port(job)
        waitForMedia(port, 1)
        XCTAssertEqual(call(port, "PATCH", "/api/outputs/o0", body: #"{"vbitrate": "500k"}"#).status, 200)
        let plain = call(port, "POST", "/api/outputs", body: #"{"output": "\#(dir)/side.flv"}"#)
        XCTAssertEqual(plain.status, 400, "\(plain.json)")
        XCTAssertEqual(plain.json["field"] as? String, "output")
        XCTAssertTrue((plain.json["error"] as? String ?? "").contains("names one file"), "\(plain.json)")
        let cut = call(port, "POST", "/api/outputs", body: #"{"output": "\#(dir)/side-%03d.flv"}"#)
        XCTAssertEqual(cut.status, 201, "\(cut.json)")
        // A URL output keeps the job going while both files are removed: then nothing is left to cut.
        let push = call(port, "POST", "/api/outputs", body: #"{"output": "tcp://127.0.0.1:9/x", "format": "flv"}"#)
        XCTAssertEqual(push.status, 201, "\(push.json)")
        waitForMedia(port, 5)
        XCTAssertEqual(call(port, "POST", "/api/segments/cut").status, 202)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o0").status, 200)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o1").status, 200)
        XCTAssertEqual(call(port, "POST", "/api/segments/cut").status, 409, "no file output left to cut")
        _ = job.wait()  // the push to a closed port failed: exit 1, the files are whole
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/side-%03d.flv"), "no file named as the pattern")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/side.flv"), "nothing created for the refused one")
        let sides = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("side-") }.sorted()
        XCTAssertGreaterThanOrEqual(sides.count, 2, "\(sides)")
        for name in sides {
            XCTAssertEqual(try Tools.decodeErrors("\(dir)/\(name)"), "", name)
            XCTAssertLessThanOrEqual(try XCTUnwrap(try Tools.probe("\(dir)/\(name)").format.seconds), 2.6, "\(name) is one segment")
        }
        let listed = try String(contentsOfFile: list, encoding: .utf8)
        XCTAssertFalse(listed.contains("side-"), "the list is the given output's: \(listed)")
        XCTAssertTrue(listed.contains("seg-000.flv"), listed)
        // Each segment's metadata says the bit rate its video was encoded at (issue 52, item 12).
        let said = { (name: String) in try Tools.probe("\(self.dir)/\(name)").stream("video")?.bit_rate }
        XCTAssertEqual(try said("seg-000.flv"), "2000000", "opened before the change")
        XCTAssertEqual(try said("seg-001.flv"), "500000", "opened after `vbitrate o0 500k`")
        XCTAssertEqual(try said(try XCTUnwrap(sides.first)), "2000000", "the added output has an encode of its own at the job's rate")
    }

    /// What the hanging-open test's threads saw: when the viewer's reads returned, and the answer.
    private final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var arrivals: [Date] = []
        var reply = ""
    }

    /// An output added with an encode of its own and removed, then another asking the same: the
    /// first encode stopped with its output, so the second gets a new one, and its video.
    func testAnEncodeWhoseOutputsEndedIsNotJoinedAgain() throws {
        let (a, b, c) = ("\(dir)/a.flv", "\(dir)/b.flv", "\(dir)/c.flv")
        let job = try ServingLivemux(["record", "-q", "-t", "6", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "320x240", "-o", a], directory: dir)
        let port = try port(job)
        waitForMedia(port, 1)
        XCTAssertEqual(call(port, "POST", "/api/outputs", body: #"{"output": "\#(b)", "vbitrate": "300k"}"#).status, 201)
        waitForMedia(port, 2)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o1").status, 200)
        waitForMedia(port, 3)
        XCTAssertEqual(call(port, "POST", "/api/outputs", body: #"{"output": "\#(c)", "vbitrate": "300k"}"#).status, 201)
        // b, once finished, may be added again: it is written anew, and says so.
        waitUntil(deadline: 3) {
            (call(port, "GET", "/api").json["outputs"] as? [[String: Any]])?.first { $0["id"] as? String == "o1" }?["state"] as? String == "finished"
        }
        let again = call(port, "POST", "/api/outputs", body: #"{"output": "\#(b)", "overwrite": true}"#)
        XCTAssertEqual(again.status, 201, "\(again.json)")
        XCTAssertEqual(again.json["state"] as? String, "writing")
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertGreaterThan(try startsClean(b).frames, 30, "b added again holds its second recording")
        let later = try startsClean(c)
        XCTAssertGreaterThan(later.frames, 60, "c has its video")
        XCTAssertEqual(later.seconds, 3, accuracy: 0.4)
    }

    /// A push added to nginx-rtmp while recording, and it and a push given at the start removed:
    /// the server's recordings start with a keyframe and decode clean, the job ends with exit 0,
    /// and the file given at the start keeps every frame.
    func testPushesAddedAndRemovedWhileRecording() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let server = try RTMPServer(directory: dir, name: "nginx")
        try server.start()
        defer { server.stop() }
        let file = "\(dir)/a.flv"
        let job = try ServingLivemux(["record", "-q", "-t", "9", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "640x360", "-o", file, "-o", "rtmp://127.0.0.1:\(server.port)/live/given"], directory: dir)
        let port = try port(job)
        waitForMedia(port, 2)
        let push = call(port, "POST", "/api/outputs", body: #"{"output": "rtmp://127.0.0.1:\#(server.port)/live/added", "vbitrate": "500k"}"#)
        XCTAssertEqual(push.status, 201, "\(push.json)")
        XCTAssertEqual(push.json["target"] as? String, "rtmp://127.0.0.1:\(server.port)/live/****", "the key is masked")
        waitForMedia(port, 6)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o2").status, 200)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o1").status, 200)
        XCTAssertEqual(job.wait(), 0, job.stderr)
        server.stop()
        let recordings = try server.recordedFiles()
        XCTAssertEqual(recordings.count, 2, "\(recordings)")
        let seconds = try recordings.map { try startsClean($0).seconds }.sorted()
        XCTAssertEqual(seconds[0], 4, accuracy: 0.5, "the push added at 2 s")
        XCTAssertEqual(seconds[1], 6, accuracy: 0.5, "the push given at the start")
        XCTAssertEqual(try startsClean(file).frames, 270)
    }

    /// Two pushes to one nginx-rtmp application with two keys (a restream to two channels: one
    /// masked name) and a third added live are three outputs everywhere (issue 49, item 1): the
    /// second removed ends the second alone (it ended the first before), each has its own state
    /// and bytes in GET /api and --stats, the added one starts at its own bytes, and /stats lists
    /// every push's link by its id.
    func testTwoPushesWithOneMaskedNameAreTwoOutputs() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let server = try RTMPServer(directory: dir, name: "nginx")
        try server.start()
        defer { server.stop() }
        let (file, stats, url) = ("\(dir)/a.flv", "\(dir)/st.jsonl", "rtmp://127.0.0.1:\(server.port)/live/")
        let job = try ServingLivemux(["record", "-q", "-t", "8", "--http", "127.0.0.1:0", "--control-key-file", keyFile, "--stats", stats,
                                      "--size", "320x240", "-o", file, "-o", url + "keya", "-o", url + "keyb"], directory: dir)
        let port = try port(job)
        let outputs = { () -> [String: [String: Any]] in
            let list = self.call(port, "GET", "/api").json["outputs"] as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as? String ?? "", $0) })
        }
        waitForMedia(port, 2)
        let added = call(port, "POST", "/api/outputs", body: #"{"output": "\#(url)keyc"}"#)
        XCTAssertEqual(added.status, 201, "\(added.json)")
        XCTAssertEqual(added.json["id"] as? String, "o3")
        XCTAssertLessThan(added.json["bytes"] as? Int ?? .max, 20_000, "its own bytes at birth, not another's: \(added.json)")
        // The three pushes share a name, and /stats has each one's link by its id.
        var links: [String] = []
        waitUntil(deadline: 3) {
            let reply = Network.get(port: port, "/stats")
            let page = reply.range(of: "\r\n\r\n").flatMap { try? JSONSerialization.jsonObject(with: Data(reply[$0.upperBound...].utf8)) } as? [String: Any]
            links = ((page?["network"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
            return links == ["o1", "o2", "o3"]
        }
        XCTAssertEqual(links, ["o1", "o2", "o3"], "/stats network")
        waitForMedia(port, 4)
        XCTAssertEqual(call(port, "DELETE", "/api/outputs/o2").status, 200)
        var states = ""
        waitUntil(deadline: 3) {
            let o = outputs()
            states = ["o1", "o2", "o3"].map { o[$0]?["state"] as? String ?? "?" }.joined(separator: " ")
            return states == "writing finished writing"
        }
        XCTAssertEqual(states, "writing finished writing", "o2 alone ended")
        let removed = outputs()["o2"]?["bytes"] as? Int ?? 0
        waitForMedia(port, 6)
        let later = outputs()
        XCTAssertEqual(later["o2"]?["bytes"] as? Int, removed, "o2's bytes stopped with it")
        XCTAssertGreaterThan(later["o1"]?["bytes"] as? Int ?? 0, removed, "o1 writes on, its own bytes")
        XCTAssertEqual(job.wait(), 0, job.stderr)
        server.stop()
        let final = try XCTUnwrap(try TimingTests.statsLines(stats).last)
        let listed = try XCTUnwrap(final["outputs"] as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["id"] as? String ?? "" }, ["o0", "o1", "o2", "o3"])
        XCTAssertEqual(listed.map { $0["state"] as? String ?? "" }, ["finished", "finished", "finished", "finished"])
        let bytes = listed.map { $0["bytes"] as? Int ?? 0 }
        XCTAssertEqual(Set(listed.dropFirst().map { $0["name"] as? String ?? "" }), ["\(url)****"], "one label")
        XCTAssertGreaterThan(bytes[1], bytes[2], "o1 ran 8 s, o2 4 s: \(bytes)")
        XCTAssertGreaterThan(bytes[1], bytes[3], "o3 ran from 2 s: \(bytes)")
        // The browsers' stream of --http is listed as serve's is.
        XCTAssertEqual(Set((final["output_states"] as? [String: String] ?? [:]).keys),
                       [file, "\(url)**** (o1)", "\(url)**** (o2)", "\(url)**** (o3)", "/live.mp4", "/live.m3u8"])
        // The server's recordings: each key's own, for as long as that output ran.
        let recordings = try server.recordedFiles()
        let seconds = { (key: String) throws -> Double in
            let path = try XCTUnwrap(recordings.first { URL(fileURLWithPath: $0).lastPathComponent.hasPrefix(key + "-") }, "\(key): \(recordings)")
            return try self.startsClean(path).seconds
        }
        XCTAssertEqual(try seconds("keya"), 8, accuracy: 0.5, "keya stayed on the air")
        XCTAssertEqual(try seconds("keyb"), 4, accuracy: 0.6, "keyb to its removal")
        XCTAssertEqual(try seconds("keyc"), 6, accuracy: 0.6, "keyc from its addition")
    }

    /// Issue 52, item 5: one state per output, the same in GET /api, /stats and --stats. A push
    /// whose server is down is `reconnecting N of M` (it said `writing`) with 0 bytes (it counted
    /// what was queued for it); an output removed answers `finished`, and a bit rate for it
    /// afterwards is 409; a source removed answers `ended` and is not said to freeze.
    func testStatesTellTheTruth() throws {
        let (file, added, stats) = ("\(dir)/a.flv", "\(dir)/b.flv", "\(dir)/st.jsonl")
        let down = try Network.freePort()
        let job = try ServingLivemux(["record", "-t", "8", "--http", "127.0.0.1:0", "--control-key-file", keyFile, "--stats", stats,
                                      "--video", "lavfi:testsrc2=size=320x240:rate=30", "--video", "lavfi:color=c=red:size=160x120:rate=30",
                                      "--size", "320x240", "--no-adaptive-bitrate", "--reconnect-delay", "0.2", "--reconnect-max-delay", "0.4",
                                      "--reconnect-attempts", "100", "-o", file, "-o", "rtmp://127.0.0.1:\(down)/live/key"], directory: dir)
        let port = try port(job)
        waitForMedia(port, 2)
        let push = { () -> [String: Any] in
            (self.call(port, "GET", "/api").json["outputs"] as? [[String: Any]] ?? []).first { $0["id"] as? String == "o1" } ?? [:]
        }
        XCTAssertTrue((push()["state"] as? String ?? "").hasPrefix("reconnecting "), "\(push())")
        XCTAssertEqual(push()["bytes"] as? Int, 0, "nothing reached a socket")
        let reply = Network.get(port: port, "/stats")
        let page = try XCTUnwrap(reply.range(of: "\r\n\r\n").flatMap { try? JSONSerialization.jsonObject(with: Data(reply[$0.upperBound...].utf8)) } as? [String: Any])
        let listed = (page["outputs"] as? [[String: Any]] ?? []).first { $0["id"] as? String == "o1" }
        XCTAssertTrue((listed?["state"] as? String ?? "").hasPrefix("reconnecting "), "/stats outputs: \(String(describing: listed))")
        XCTAssertTrue(((page["output_states"] as? [String: String])?["rtmp://127.0.0.1:\(down)/live/****"] ?? "").hasPrefix("reconnecting "), "\(page)")
        let refused = call(port, "POST", "/api/outputs/o1/reconnect")
        XCTAssertEqual(refused.status, 409, "\(refused.json)")
        // An output added and removed: the answer says it finished; its bit rate can no longer be set.
        XCTAssertEqual(call(port, "POST", "/api/outputs", body: #"{"output": "\#(added)", "vbitrate": "300k"}"#).status, 201)
        waitForMedia(port, 3.5)
        let removed = call(port, "DELETE", "/api/outputs/o2")
        XCTAssertEqual(removed.status, 200, "\(removed.json)")
        XCTAssertEqual(removed.json["state"] as? String, "finished", "\(removed.json)")
        XCTAssertEqual(call(port, "PATCH", "/api/outputs/o2", body: #"{"vbitrate": "200k"}"#).status, 409, "o2 has ended")
        // A source removed has ended, and left the picture: no word of a frozen picture.
        let source = call(port, "DELETE", "/api/sources/v1")
        XCTAssertEqual(source.status, 200, "\(source.json)")
        XCTAssertEqual(source.json["state"] as? String, "ended", "\(source.json)")
        _ = job.wait()
        XCTAssertFalse(job.stderr.contains("stays on its last frame"), job.stderr)
        XCTAssertEqual(try Tools.decodeErrors(file), "")
        XCTAssertEqual(try Tools.decodeErrors(added), "")
        let final = try XCTUnwrap(try TimingTests.statsLines(stats).last)
        let states = (final["outputs"] as? [[String: Any]] ?? []).map { "\($0["id"] ?? "") \($0["state"] ?? "") \($0["bytes"] ?? "")" }
        XCTAssertEqual(states.count, 3, "\(states)")
        XCTAssertTrue(states[0].hasPrefix("o0 finished "), "\(states)")
        XCTAssertTrue(states[1].hasPrefix("o1 failed: ") && states[1].hasSuffix(" 0"), "the push never connected, and sent nothing: \(states)")
        XCTAssertTrue(states[2].hasPrefix("o2 finished "), "\(states)")
    }

    /// A push asked to reconnect closes its connection and publishes again at once, from a
    /// keyframe: the server records two publishes, both decode clean, and the job ends with exit 0.
    /// A file has no connection (409).
    func testAPushReconnectsWhenAsked() throws {
        try XCTSkipUnless(RTMPServer.isAvailable, "nginx with libnginx-mod-rtmp missing: run scripts/setup --test")
        let server = try RTMPServer(directory: dir, name: "nginx")
        try server.start()
        defer { server.stop() }
        let job = try ServingLivemux(["record", "-q", "-t", "6", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--size", "320x240", "-o", "\(dir)/a.flv", "-o", "rtmp://127.0.0.1:\(server.port)/live/key"], directory: dir)
        let port = try port(job)
        var answer = (status: 0, json: [String: Any]())
        // Asked once it is connected (409 before: it connects by itself), a second later, since
        // nginx names a recording by the second its publish began.
        waitForMedia(port, 1.5)
        waitUntil(deadline: 4) {
            answer = call(port, "POST", "/api/outputs/o1/reconnect")
            return answer.status == 202
        }
        XCTAssertEqual(answer.status, 202, "\(answer.json)")
        XCTAssertEqual(call(port, "POST", "/api/outputs/o0/reconnect").status, 409, "a file has no connection")
        XCTAssertEqual(job.wait(), 0, job.stderr)
        server.stop()
        let recordings = try server.recordedFiles()
        XCTAssertEqual(recordings.count, 2, "two publishes: \(recordings)")
        for path in recordings {
            // The second publish goes on with the stream's timestamps, as after any reconnect.
            let p = try Tools.probe(path, packets: true)
            let video = try XCTUnwrap(p.stream("video"), path)
            XCTAssertTrue(try XCTUnwrap(p.packets?.first { $0.stream_index == video.index }).flags.hasPrefix("K"), "\(path) starts with a keyframe")
            XCTAssertEqual(try Tools.decodeErrors(path), "", path)
        }
    }

    /// v1 (red) made the main picture 2 s in, then side by side 4 s in: each shows in the
    /// recording from about then (pixels read back from frames), at the same size, every frame kept.
    func testTheMainPictureAndTheLayoutChangeWhileRecording() throws {
        let file = "\(dir)/a.flv"
        let job = try ServingLivemux(["record", "-q", "-t", "6", "--fps", "25", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--video", "lavfi:color=c=blue:size=640x360:rate=25", "--video", "lavfi:color=c=red:size=320x180:rate=25",
                                      "-o", file], directory: dir)
        let port = try port(job)
        waitForMedia(port, 2)
        let main = call(port, "PUT", "/api/layout", body: #"{"main": "v1"}"#)
        let mainPlaced = placedTime(port)
        XCTAssertEqual(main.status, 200, "\(main.json)")
        XCTAssertEqual(call(port, "PUT", "/api/layout", body: #"{"main": "v2"}"#).json["field"] as? String, "main")
        XCTAssertEqual(call(port, "PUT", "/api/layout", body: #"{"layout": "diagonal"}"#).json["field"] as? String, "layout")
        waitForMedia(port, 4)
        XCTAssertEqual(call(port, "PUT", "/api/layout", body: #"{"layout": "side-by-side"}"#).status, 200)
        let layoutPlaced = placedTime(port)
        let layout = call(port, "GET", "/api").json["layout"] as? [String: String]
        XCTAssertEqual(layout, ["layout": "side-by-side", "main": "v1"])
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertEqual(try Tools.decodeErrors(file), "")
        let video = try XCTUnwrap(try Tools.probe(file).stream("video"))
        XCTAssertEqual([video.width, video.height, video.packetCount], [640, 360, 150])
        let isRed = { (p: (r: Int, g: Int, b: Int)) in p.r > 200 && p.b < 60 }
        let isBlue = { (p: (r: Int, g: Int, b: Int)) in p.b > 200 && p.r < 60 }
        let at1 = try MediaAnalysis.frame(file, at: 1), at3 = try MediaAnalysis.frame(file, at: 3), at5 = try MediaAnalysis.frame(file, at: 5)
        XCTAssertTrue(isBlue(MediaAnalysis.pixel(at1, 320, 90)), "v0 the main picture before: \(MediaAnalysis.pixel(at1, 320, 90))")
        XCTAssertTrue(isRed(MediaAnalysis.pixel(at3, 320, 90)), "v1 the main picture after: \(MediaAnalysis.pixel(at3, 320, 90))")
        XCTAssertTrue(isBlue(MediaAnalysis.pixel(at3, 590, 320)), "v0 in the corner: \(MediaAnalysis.pixel(at3, 590, 320))")
        XCTAssertTrue(isRed(MediaAnalysis.pixel(at5, 160, 180)), "v1 on the left: \(MediaAnalysis.pixel(at5, 160, 180))")
        XCTAssertTrue(isBlue(MediaAnalysis.pixel(at5, 480, 180)), "v0 on the right: \(MediaAnalysis.pixel(at5, 480, 180))")
        // Issue 39: each change from within 2 frame intervals of the frame being encoded at the answer.
        let centre = try MediaAnalysis.pixelTrack(file, 320, 90), right = try MediaAnalysis.pixelTrack(file, 480, 180)
        let mainShown = Double(try XCTUnwrap(centre.firstIndex { isRed($0) })) / 25
        let layoutShown = Double(try XCTUnwrap((Int(mainShown * 25)..<right.count).first { isBlue(right[$0]) })) / 25
        print("control, layout: main placed \(mainPlaced) s, shown \(mainShown) s; side by side placed \(layoutPlaced) s, shown \(layoutShown) s")
        XCTAssertLessThanOrEqual(mainShown - mainPlaced, 2.0 / 25 + 0.001, "the main picture within 2 frames of the answer")
        XCTAssertLessThanOrEqual(layoutShown - layoutPlaced, 2.0 / 25 + 0.001, "the layout within 2 frames of the answer")
    }

    /// v1 (red, in the corner) and a1 (1 kHz) removed 2 s in: the corner shows v0 (blue) and the
    /// mix loses 1 kHz from then, 440 Hz and every frame kept; v0 and a0 time the job and stay.
    func testSourcesRemovedWhileRecording() throws {
        let file = "\(dir)/a.flv"
        let job = try ServingLivemux(["record", "-q", "-t", "5", "--fps", "25", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--video", "lavfi:color=c=blue:size=640x360:rate=25", "--video", "lavfi:color=c=red:size=320x180:rate=25",
                                      "--audio", "lavfi:sine=frequency=440:sample_rate=48000", "--audio", "lavfi:sine=frequency=1000:sample_rate=48000",
                                      "-o", file], directory: dir)
        let port = try port(job)
        waitForMedia(port, 2)
        let removedAt = mediaTime(port)
        XCTAssertEqual(call(port, "DELETE", "/api/sources/v1").status, 200)
        XCTAssertEqual(call(port, "DELETE", "/api/sources/a1").status, 200)
        XCTAssertEqual(call(port, "DELETE", "/api/sources/v1").status, 409, "already removed")
        XCTAssertEqual(call(port, "DELETE", "/api/sources/a0").status, 409, "a0 times the mix")
        XCTAssertEqual(call(port, "DELETE", "/api/sources/v0").status, 409, "v0 times the picture")
        XCTAssertEqual(call(port, "DELETE", "/api/sources/v7").status, 404)
        XCTAssertEqual(call(port, "PUT", "/api/layout", body: #"{"main": "v1"}"#).status, 409, "a removed source cannot be the main picture")
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertEqual(try Tools.decodeErrors(file), "")
        XCTAssertEqual(try Tools.probe(file).stream("video")?.packetCount, 125)
        let corner = { (t: Double) in MediaAnalysis.pixel(try MediaAnalysis.frame(file, at: t), 590, 320) }
        XCTAssertGreaterThan(try corner(1).r, 200, "v1 in the corner before")
        XCTAssertGreaterThan(try corner(4).b, 200, "v0 alone after")
        let samples = try MediaAnalysis.samples(file)
        let high = MediaAnalysis.amplitudes(of: 1000, in: samples, window: 0.1), low = MediaAnalysis.amplitudes(of: 440, in: samples, window: 0.1)
        let gone = Double(try XCTUnwrap((10..<high.count).first { high[$0] < high[10] * 0.1 })) * 0.1
        print("control, sources: removed at \(removedAt) s, 1 kHz gone at \(gone) s")
        XCTAssertEqual(gone, removedAt, accuracy: 0.25)
        XCTAssertEqual(low[40], low[10], accuracy: low[10] * 0.1, "a0 goes on")
    }

    /// v1 (red, into the corner) and a1 (1 kHz, into the mix) added 2 s in, v1 removed again 4 s
    /// in: each shows from the media time of the answer (within 0.25 s), every frame kept, the
    /// file clean; sources that cannot open, or could keep the job waiting, are refused by field
    /// with nothing added.
    func testSourcesAddedWhileRecording() throws {
        let file = "\(dir)/a.flv"
        let stats = "\(dir)/stats.jsonl"
        let job = try ServingLivemux(["record", "-q", "-t", "6", "--fps", "25", "--http", "127.0.0.1:0", "--control-key-file", keyFile,
                                      "--stats", stats, "--video", "lavfi:color=c=blue:size=640x360:rate=25",
                                      "--audio", "lavfi:sine=frequency=440:sample_rate=48000", "-o", file], directory: dir)
        let port = try port(job)
        waitForMedia(port, 2)
        let video = call(port, "POST", "/api/sources", body: #"{"video": "lavfi:color=c=red:size=320x180:rate=25"}"#)
        let placedAt = placedTime(port)
        let addedAt = mediaTime(port)
        let audio = call(port, "POST", "/api/sources", body: #"{"audio": "lavfi:sine=frequency=1000:sample_rate=48000"}"#)
        XCTAssertEqual(video.status, 201, "\(video.json)")
        XCTAssertEqual(video.json["id"] as? String, "v1")
        XCTAssertEqual(audio.status, 201, "\(audio.json)")
        XCTAssertEqual(audio.json["id"] as? String, "a1")
        for (body, field) in [(#"{"video": "\#(dir)/missing.mp4"}"#, "video"), (#"{"audio": "lavfi:nosuchfilter"}"#, "audio"),
                              (#"{"video": "rtmp://127.0.0.1/live/x"}"#, "video"), (#"{"audio": "-"}"#, "audio"),
                              (#"{"audio": "lavfi:sine", "options": ["frequency"]}"#, "options"),
                              (#"{"audio": "lavfi:sine", "options": {"frequency": 1000}}"#, "audio"),
                              (#"{"video": "lavfi:testsrc2", "audio": "lavfi:sine"}"#, "audio"), (#"{"camera": "x"}"#, "camera")] {
            let refused = call(port, "POST", "/api/sources", body: body)
            XCTAssertEqual(refused.status, 400, body)
            XCTAssertEqual(refused.json["field"] as? String, field, "\(body): \(refused.json)")
        }
        let sources = try XCTUnwrap(call(port, "GET", "/api").json["sources"] as? [[String: Any]])
        XCTAssertEqual(sources.map { $0["id"] as? String }, ["v0", "v1", "a0", "a1"], "nothing added by a refusal")
        XCTAssertEqual(sources.last?["volume"] as? Double, 1)
        XCTAssertEqual(sources.last?["name"] as? String, "lavfi:sine=frequency=1000:sample_rate=48000")
        waitForMedia(port, 4)
        XCTAssertEqual(call(port, "DELETE", "/api/sources/v1").status, 200)
        let removedPlaced = placedTime(port)
        let removedAt = mediaTime(port)
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertEqual(try Tools.decodeErrors(file), "")
        XCTAssertEqual(try Tools.probe(file).stream("video")?.packetCount, 150, "every frame, none dropped or repeated")
        let corner = try MediaAnalysis.pixelTrack(file, 590, 320)
        let firstRed = try XCTUnwrap(corner.firstIndex { $0.r > 200 && $0.b < 60 }, "v1 shows in the corner")
        let lastRed = try XCTUnwrap(corner.lastIndex { $0.r > 200 && $0.b < 60 })
        let (shown, gone) = (Double(firstRed) / 25, Double(lastRed + 1) / 25)
        let samples = try MediaAnalysis.samples(file)
        let window = 0.05
        let high = MediaAnalysis.amplitudes(of: 1000, in: samples, window: window), low = MediaAnalysis.amplitudes(of: 440, in: samples, window: window)
        // The onset read to 10 ms windows: a 50 ms window the tone fills partly may pass or not.
        let fine = 0.01
        let fineHigh = MediaAnalysis.amplitudes(of: 1000, in: samples, window: fine)
        let heard = Double(try XCTUnwrap(fineHigh.indices.first { fineHigh[$0] > low[Int(1 / window)] * 0.5 }, "a1 is heard")) * fine
        print("control, sources added: answered at \(addedAt) s (placed \(placedAt) s), v1 shows at \(shown) s, a1 heard at \(heard) s;"
              + " removed at \(removedAt) s (placed \(removedPlaced) s), gone at \(gone) s")
        XCTAssertEqual(shown, addedAt, accuracy: 0.25, "v1 shows where it was answered")
        XCTAssertEqual(heard, addedAt, accuracy: 0.25, "a1 is heard where it was answered")
        XCTAssertEqual(gone, removedAt, accuracy: 0.25, "v1 leaves where it was removed")
        // Issue 39: within 2 frame intervals of the frame being encoded at the answer (the audio,
        // give or take its 10 ms window).
        let twoFrames = 2.0 / 25 + 0.001
        XCTAssertLessThanOrEqual(shown - placedAt, twoFrames, "v1 shows within 2 frames of the answer")
        XCTAssertLessThanOrEqual(heard - placedAt, twoFrames + fine, "a1 is heard within 2 frames of the answer")
        XCTAssertLessThanOrEqual(gone - removedPlaced, twoFrames, "v1 leaves within 2 frames of the answer")
        XCTAssertTrue(corner[..<(firstRed - 1)].allSatisfy { $0.b > 200 }, "v0 alone before")
        XCTAssertEqual(low[Int(5.5 / window)], low[Int(1 / window)], accuracy: low[Int(1 / window)] * 0.1, "a0 goes on at its level")
        XCTAssertEqual(high[Int(5.5 / window)], low[Int(5.5 / window)], accuracy: low[Int(5.5 / window)] * 0.15, "a1 at unity, as a0")
        let lines = try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n")
        let final = try XCTUnwrap(lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any])
        let changes = ((final["changes"] as? [[String: Any]]) ?? []).map { "\($0["target"] ?? "") \($0["setting"] ?? "")" }
        XCTAssertEqual(changes, ["v1 added", "a1 added", "v1 removed"])
    }

    /// A picture that is the user's own graph takes no source added (409, nothing changed); the
    /// mix, which is LiveMux's, still does.
    func testASourceJoinsOnlyAGraphLiveMuxBuilt() throws {
        let file = "\(dir)/a.flv"
        let job = try ServingLivemux(["record", "-q", "-t", "3", "--http", "127.0.0.1:0", "--control-key-file", keyFile, "--size", "320x240",
                                      "--filter-complex", "[v0]hue=s=0[vout]", "-o", file], directory: dir)
        let port = try port(job)
        waitForMedia(port, 1)
        let video = call(port, "POST", "/api/sources", body: #"{"video": "lavfi:testsrc2"}"#)
        XCTAssertEqual(video.status, 409, "\(video.json)")
        XCTAssertEqual(video.json["field"] as? String, "video")
        XCTAssertEqual(call(port, "POST", "/api/sources", body: #"{"audio": "lavfi:sine=frequency=1000"}"#).status, 201)
        XCTAssertEqual(job.wait(), 0, job.stderr)
        XCTAssertEqual(try Tools.decodeErrors(file), "")
        XCTAssertEqual(try Tools.probe(file).stream("video")?.packetCount, 90)
    }
}
