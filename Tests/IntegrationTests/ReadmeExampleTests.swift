import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// Every command in README.md's `sh` blocks runs as written (issue 18), except those that need a
/// device or a server this test cannot start, each skipped with its reason. Each change to an
/// example is a named substitution that must match the README's text: `-t` made short where an
/// example runs long or until Ctrl-C, a free local port for a fixed one, a local nginx-rtmp for
/// a remote server, and ffplay without a window (`-nodisp -autoexit`: it quits at the end of a
/// bounded stream). A README command missing from the table, or a table entry missing from the
/// README, fails the test.
final class ReadmeExampleTests: TemporaryDirectoryTestCase {
    struct Example {
        /// The command as README.md has it, without its comment.
        let readme: String
        /// (README text, what runs instead), each applied once and required to match.
        var changes: [(String, String)] = []
        /// Shell lines run before it in its directory: the inputs it reads.
        var setup: [String] = []
        /// Run after it (`&&`): what its comment says to do next, bounded the same way.
        var then: String?
        /// Why it is not run.
        var skip: String?
        /// Checks its directory and output once it exited 0.
        var check: (_ dir: String, _ result: Tools.Result) throws -> Void = { _, _ in }
    }

    static let headless = "ffplay -v error -nodisp -autoexit -nostats"
    /// 1 s of 160x120 H.264 at 30 fps and AAC, as the mux examples' inputs.
    static let sources = "testsrc2=size=160x120:rate=30 -f lavfi -i sine=sample_rate=48000 -t 1 -c:v libx264 -bf 0"

    static func decodes(_ path: String, _ options: [String] = []) throws {
        XCTAssertEqual(try Tools.decodeErrors(path, inputOptions: options), "", path)
    }

    /// Only livemux's progress line and warnings: nothing from ffplay at -v error.
    static func onlyLivemux(_ r: Tools.Result) {
        for line in r.stderr.split(separator: "\n") { XCTAssertTrue(line.hasPrefix("time="), "ffplay said: \(line)") }
    }

    func examples(rtmpPort: Int?, httpPort: Int) -> [Example] {
        let livemux = "livemux"
        return [
            Example(readme: "scripts/demo", skip: "builds a release binary (minutes); its recording is the first Use example"),
            Example(readme: "scripts/test", skip: "the test suite itself"),
            Example(readme: "livemux record -t 10 -o demo.asf", changes: [("-t 10", "-t 1")]) { d, _ in
                XCTAssertEqual(try Tools.probe("\(d)/demo.asf").stream("video")?.packetCount, 30)
                try Self.decodes("\(d)/demo.asf")
            },
            Example(readme: "livemux record -o - -f flv | ffplay -",
                    changes: [("record -o -", "record -t 1 -o -"), ("| ffplay -", "| \(Self.headless) -")]) { _, r in
                Self.onlyLivemux(r)
            },
            Example(readme: "livemux record --video v4l2:/dev/video0 --audio pulse:default -o cam.flv",
                    skip: "needs a camera (/dev/video0) and a PulseAudio server"),
            Example(readme: "livemux record --video x11grab::0 --video v4l2:/dev/video0 --audio pulse:default --audio pulse:@DEFAULT_MONITOR@ -o stream.flv",
                    skip: "needs an X display, a camera and a PulseAudio server (MultiSourceDeviceTests run the rig's)"),
            Example(readme: "livemux record -t 10 --video lavfi:testsrc2=size=1280x720 --video lavfi:smptebars=size=320x180 --audio lavfi:sine --audio lavfi:sine=frequency=1000 --volume a1=-6dB --vf 'eq=brightness=0.06:saturation=1.3' -o mix.asf",
                    changes: [("-t 10", "-t 1")]) { d, _ in
                XCTAssertEqual(try Tools.probe("\(d)/mix.asf").stream("video")?.width, 1280)
                let samples = try MediaAnalysis.samples("\(d)/mix.asf")
                XCTAssertEqual(MediaAnalysis.amplitude(of: 440, in: samples[12000..<36000]), 0.125, accuracy: 0.01)
                XCTAssertEqual(MediaAnalysis.amplitude(of: 1000, in: samples[12000..<36000]), 0.0627, accuracy: 0.006)
                try Self.decodes("\(d)/mix.asf")
            },
            Example(readme: "livemux record --input 'lavfi:avsynctest=size=640x360:framerate=25:samplerate=44100[out0][out1]' -o sync.asf",
                    changes: [(" -o sync.asf", " -t 1 -o sync.asf")]) { d, _ in
                // The comment's promise: the source keeps its own size, rate and sample rate.
                let p = try Tools.probe("\(d)/sync.asf")
                XCTAssertEqual(p.stream("video")?.width, 640)
                XCTAssertEqual(p.stream("video")?.packetCount, 25)
                XCTAssertEqual(p.stream("audio")?.sample_rate, "44100")
                try Self.decodes("\(d)/sync.asf")
            },
            Example(readme: "livemux record --vcodec hevc --size 1920x1080 --vbitrate 4M -o hevc.asf",
                    changes: [("--vbitrate 4M", "--vbitrate 4M -t 0.5")], then: "\(Self.headless) -vcodec hevc hevc.asf") { d, _ in
                // FFmpeg 5.1's ASF reader does not name HEVC: the decoder is given, as the example's comment does.
                XCTAssertEqual(try Tools.probe("\(d)/hevc.asf").stream("video")?.packetCount, 15)
                try Self.decodes("\(d)/hevc.asf", ["-vcodec", "hevc"])
            },
            Example(readme: "livemux record --fps 29.97 --size 640x360 -t 10 -o ntsc.asf", changes: [("-t 10", "-t 1")]) { d, _ in
                let v = try XCTUnwrap(try Tools.probe("\(d)/ntsc.asf").stream("video"))
                XCTAssertEqual(v.packetCount, 30, "1 s at 30000/1001 is 30 frames")
                XCTAssertEqual(v.width, 640)
            },
            Example(readme: "livemux record --no-realtime -t 30 -o fast.asf", changes: [("-t 30", "-t 2")]) { d, _ in
                XCTAssertEqual(try Tools.probe("\(d)/fast.asf").stream("video")?.packetCount, 60)
            },
            Example(readme: "livemux record -o rec.asf -o rtmp://live.example.com/app/STREAMKEY",
                    changes: [("record -o", "record -t 2 -o"), ("rtmp://live.example.com/app/", "rtmp://127.0.0.1:\(rtmpPort ?? 0)/live/")],
                    skip: rtmpPort == nil ? "nginx with libnginx-mod-rtmp missing: run scripts/setup --test" : nil) { d, r in
                XCTAssertFalse(r.stderr.contains("STREAMKEY"), r.stderr)
                try Self.decodes("\(d)/rec.asf")
            },
            Example(readme: "livemux record -o rtmps://ingest.example.com/live/KEY --tls-ca-file private-ca.pem",
                    skip: "needs an RTMPS server with a private CA; TLSVerificationTests runs this against stunnel in front of nginx-rtmp"),
            Example(readme: "livemux record --vcodec hevc -o rtmp://live.example.com/app/KEY",
                    changes: [("record", "record -t 1 --size 320x240"), ("rtmp://live.example.com/app/", "rtmp://127.0.0.1:\(rtmpPort ?? 0)/live/")],
                    skip: rtmpPort == nil ? "nginx with libnginx-mod-rtmp missing: run scripts/setup --test" : nil) { _, r in
                // nginx-rtmp 1.2.2 accepts the Enhanced RTMP publish (HEVCFLVTests reads the bytes back).
                XCTAssertFalse(r.stderr.contains("/KEY"), r.stderr)
            },
            Example(readme: "livemux record --vcodec hevc --flv-hevc codec12 -o hevc.flv",
                    changes: [("record", "record -t 1 --size 320x240")]) { d, _ in
                // FFmpeg 5.1 knows no codec for id 12: a current FFmpeg (PyAV) reads it back.
                let flv = try PyAV.read("\(d)/hevc.flv")
                XCTAssertEqual(flv.codec, "hevc")
                XCTAssertEqual(flv.packets, 30)
            },
            Example(readme: "livemux serve --listen 127.0.0.1:8080 -o rec.asf",
                    changes: [("serve", "serve -t 3"), ("127.0.0.1:8080", "127.0.0.1:\(httpPort)"), (" -o rec.asf", " -o rec.asf 2> serve.log &")],
                    // The comment's viewer, once the server says where it listens; then wait for serve.
                    then: "for i in $(seq 100); do grep -q 'serving viewers' serve.log && break; sleep 0.1; done; "
                        + "\(Self.headless) -t 1 http://127.0.0.1:\(httpPort)/live.flv && wait $!") { d, _ in
                let log = try String(contentsOfFile: "\(d)/serve.log", encoding: .utf8)
                XCTAssertTrue(log.hasPrefix("serving viewers at http://127.0.0.1:\(httpPort)/live.flv and http://127.0.0.1:\(httpPort)/live.asf\n"), log)
                try Self.decodes("\(d)/rec.asf")
            },
            Example(readme: "livemux serve --listen 0.0.0.0:8080 --max-viewers 2000",
                    changes: [("serve", "serve -t 3"), ("0.0.0.0:8080", "0.0.0.0:\(httpPort)"), ("2000", "2000 2> serve.log &")],
                    // The comment's index, read once the server says where it listens.
                    then: "for i in $(seq 100); do grep -q 'serving viewers' serve.log && break; sleep 0.1; done; "
                        + "python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:\(httpPort)/\").read().decode())' > index.txt && wait $!") { d, _ in
                let index = try String(contentsOfFile: "\(d)/index.txt", encoding: .utf8)
                XCTAssertTrue(index.contains("/live.flv"), index)
                XCTAssertTrue(index.contains("at most 2000 viewers"), index)
            },
            Example(readme: "livemux serve --viewer-key-file viewer.key -o rec.asf",
                    changes: [("serve", "serve -t 3 --listen 127.0.0.1:\(httpPort)"), (" -o rec.asf", " -o rec.asf 2> serve.log &")],
                    setup: ["(umask 077; openssl rand -hex 16 > viewer.key)"],
                    // Without the key 403; with the URL it prints (which carries the key) 200.
                    then: "for i in $(seq 100); do grep -q 'serving viewers' serve.log && break; sleep 0.1; done; "
                        + "curl -s -o /dev/null -w '%{http_code} ' -I http://127.0.0.1:\(httpPort)/live.flv > codes.txt; "
                        + "curl -s -o /dev/null -w '%{http_code}' -I \"$(sed -n 's/^serving viewers at \\([^ ]*\\) .*/\\1/p' serve.log)\" >> codes.txt && wait $!") { d, _ in
                XCTAssertEqual(try String(contentsOfFile: "\(d)/codes.txt", encoding: .utf8), "403 200")
                try Self.decodes("\(d)/rec.asf")
            },
            Example(readme: "livemux record -t 60 -o live.flv --stats stats.jsonl", changes: [("-t 60", "-t 1")]) { d, _ in
                let lines = try TimingTests.statsLines("\(d)/stats.jsonl")
                XCTAssertEqual(lines.last?["final"] as? Bool, true)
            },
            Example(readme: "livemux report live.flv --svg live.svg", setup: ["\(livemux) record -q -t 1 -o live.flv"]) { d, r in
                XCTAssertTrue(r.stdoutText.contains("GOP: "), r.stdoutText)
                let svg = try XCTUnwrap(FileManager.default.contents(atPath: "\(d)/live.svg"))
                XCTAssertTrue(XMLParser(data: svg).parse())
            },
            // Killed once its first media is on disk: what SIGKILL or a power loss leaves.
            Example(readme: "livemux repair rec.asf",
                    setup: ["\(livemux) record -q -o rec.asf & recorder=$!",
                            "for i in $(seq 600); do [ \"$(stat -c %s rec.asf 2>/dev/null || echo 0)\" -gt 65536 ] && break; sleep 0.05; done",
                            "kill -KILL $recorder; wait $recorder || true"]) { d, r in
                // bash says on stderr too that its job was killed.
                XCTAssertTrue(r.stderr.split(separator: "\n").contains { $0.hasPrefix("repaired rec.asf into rec.repaired.asf") }, r.stderr)
                XCTAssertNotNil(try Tools.probe("\(d)/rec.repaired.asf").format.seconds)
                try Self.decodes("\(d)/rec.repaired.asf")
            },
            Example(readme: "livemux mux --video clip.h264 --audio clip.aac -o clip.flv",
                    setup: ["ffmpeg -v error -f lavfi -i \(Self.sources) -c:a aac clip.mp4",
                            "ffmpeg -v error -i clip.mp4 -an -c copy -bsf:v h264_mp4toannexb clip.h264",
                            "ffmpeg -v error -i clip.mp4 -vn -c copy clip.aac"]) { d, _ in
                XCTAssertEqual(try Tools.probe("\(d)/clip.flv").stream("video")?.packetCount, 30)
                try Self.decodes("\(d)/clip.flv")
            },
            Example(readme: "livemux mux --input movie.mp4 -o - -f flv | ffplay -",
                    changes: [("| ffplay -", "| \(Self.headless) -")],
                    setup: ["ffmpeg -v error -f lavfi -i \(Self.sources) -c:a aac movie.mp4"]) { _, r in
                Self.onlyLivemux(r)
            },
            Example(readme: "livemux mux --input movie.mp4 -o rtmp://live.example.com/app/KEY -o movie.flv",
                    changes: [("rtmp://live.example.com/app/", "rtmp://127.0.0.1:\(rtmpPort ?? 0)/live/")],
                    setup: ["ffmpeg -v error -f lavfi -i \(Self.sources) -c:a aac movie.mp4"],
                    skip: rtmpPort == nil ? "nginx with libnginx-mod-rtmp missing: run scripts/setup --test" : nil) { d, r in
                XCTAssertFalse(r.stderr.contains("/KEY"), r.stderr)
                XCTAssertEqual(try Tools.probe("\(d)/movie.flv").stream("video")?.packetCount, 30)
            },
            Example(readme: "livemux record -y -t 10 -o demo.asf", changes: [("-t 10", "-t 1")], setup: ["echo old > demo.asf"]) { d, _ in
                try Self.decodes("\(d)/demo.asf")
            },
            // Segments (issue 28): a day's ring shortened to seconds (the names then need the
            // seconds too), the list played as one by the concat demuxer, and mux's pieces.
            Example(readme: "livemux record --segment-time 1h --segment-at-clock --segment-keep 24 -o 'rec-%Y%m%d-%H.asf'",
                    changes: [("--segment-time 1h", "--segment-time 1 --no-realtime -t 3.5"), ("-%H.asf", "-%H%M%S.asf")]) { d, _ in
                let segments = try FileManager.default.contentsOfDirectory(atPath: d).filter { $0.hasPrefix("rec-") }
                XCTAssertGreaterThanOrEqual(segments.count, 4, "\(segments)")
                for name in segments { try Self.decodes("\(d)/\(name)") }
            },
            Example(readme: "livemux record --segment-time 10m --segment-list rec.ffconcat -o 'rec-%03d.flv'",
                    changes: [("--segment-time 10m", "--segment-time 1 --gop 1 --no-realtime -t 3")],
                    then: "ffmpeg -v error -f concat -i rec.ffconcat -f null -") { d, _ in
                XCTAssertEqual(try Tools.probe("\(d)/rec.ffconcat", extra: ["-f", "concat"]).stream("video")?.packetCount, 90)
            },
            Example(readme: "livemux mux -i long.mp4 --segment-time 5 -o 'p%03d.flv'",
                    setup: ["ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=30 -f lavfi -i sine=sample_rate=48000 -t 12"
                            + " -c:v libx264 -bf 0 -g 60 -c:a aac long.mp4"]) { d, _ in
                XCTAssertEqual(try Tools.probe("\(d)/p000.flv").format.seconds ?? 0, 6, accuracy: 0.05)
                XCTAssertEqual(try Tools.probe("\(d)/p001.flv").format.seconds ?? 0, 6, accuracy: 0.05)
                XCTAssertFalse(FileManager.default.fileExists(atPath: "\(d)/p002.flv"))
            },
            Example(readme: "livemux help record") { _, r in
                XCTAssertTrue(r.stdoutText.hasPrefix("USAGE: livemux record"), r.stdoutText)
            },
            Example(readme: "livemux --version") { _, r in
                XCTAssertTrue(r.stdoutText.hasPrefix("livemux "), r.stdoutText)
            },
        ]
    }

    /// The commands of README.md's `sh` blocks, without their comments.
    static func readmeCommands() throws -> [String] {
        let text = try String(contentsOf: Tools.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        var commands: [String] = [], inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock = line == "```sh"; continue }
            guard inBlock else { continue }
            let command = line.range(of: #"\s+#\s"#, options: .regularExpression).map { String(line[..<$0.lowerBound]) } ?? String(line)
            if !command.trimmingCharacters(in: .whitespaces).isEmpty { commands.append(command) }
        }
        return commands
    }

    func testEveryReadmeExampleRuns() throws {
        let server = RTMPServer.isAvailable ? try RTMPServer(directory: dir) : nil
        try server?.start()
        defer { server?.stop() }
        let all = examples(rtmpPort: server?.port, httpPort: try Network.freePort())
        let readme = try Self.readmeCommands()
        XCTAssertEqual(readme, all.map(\.readme), "the table follows README.md, command for command")
        let bin = "\(dir)/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(bin)/livemux", withDestinationPath: Tools.livemux)
        for (n, example) in all.enumerated() {
            if let reason = example.skip {
                print("README example not run: \(example.readme): \(reason)")
                continue
            }
            var command = example.readme
            for (from, to) in example.changes {
                let range = try XCTUnwrap(command.range(of: from), "'\(from)' is in '\(example.readme)'")
                command.replaceSubrange(range, with: to)
            }
            if let then = example.then { command += command.hasSuffix("&") ? " \(then)" : " && \(then)" }
            let work = "\(dir)/example-\(n)"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let script = (["set -eo pipefail", "cd '\(work)'"] + example.setup + [command]).joined(separator: "\n")
            let r = try Tools.run("bash", ["-c", script], environment: ["PATH": "\(bin):/usr/bin:/bin", "SDL_AUDIODRIVER": "dummy"],
                                  timeout: 60)
            XCTAssertEqual(r.status, 0, "\(command): \(r.stderr)")
            guard r.status == 0 else { continue }
            try example.check(work, r)
        }
        if let server {
            server.stop()  // finishes its recording
            let pushed = try XCTUnwrap(try server.recordedFiles().first { $0.contains("/STREAMKEY") }, "the record-and-push example reached nginx")
            XCTAssertGreaterThan(try Tools.probe(pushed).stream("video")?.packetCount ?? 0, 30)
        }
    }
}
