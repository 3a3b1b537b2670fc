import Foundation
import XCTest
import POSIX
@testable import LiveMux

/// A pipeline whose build fails part way releases everything it built before: an app that retries
/// must not gain a thread or a descriptor per attempt (issue 27, item 2). Before, each attempt
/// with an RTMP output and `listen` before a file that could not be created left the network
/// output's two threads and the server's two descriptors behind.
final class FailedBuildTests: TemporaryDirectoryTestCase {
    static func count(_ folder: String) -> Int { (try? FileManager.default.contentsOfDirectory(atPath: folder).count) ?? -1 }

    /// Tiny built-in sources, so that building is quick.
    func configuration(_ outputs: [Destination], listen: ListenAddress? = nil) -> RecordConfiguration {
        var c = RecordConfiguration()
        (c.video.width, c.video.height) = (160, 120)
        c.outputs.destinations = outputs.map { OutputSpec(destination: $0, format: .flv) }
        c.outputs.listen = listen
        c.outputs.overwriteFiles = false
        return c
    }

    func testEveryStepThatFailsReleasesWhatWasBuilt() throws {
        let busy = try HTTPServer(address: ListenAddress(port: 0), routes: [:])
        let push = Destination.network("rtmp://127.0.0.1:1/live/key")
        var missingAudio = configuration([.file("\(dir)/a.flv")])
        missingAudio.audioSource = SourceSpec(format: nil, url: "\(dir)/missing.wav")
        let lateFile = configuration([push, .standardOutput, .file("\(dir)/missing/x.flv")], listen: ListenAddress(port: 0))
        var lateFileOneSession = lateFile  // every output in one session, the push's sink made first
        lateFileOneSession.video.sharedEncode = true
        var badEncoder = configuration([.file("\(dir)/e.flv")])
        badEncoder.video.preset = "no-such-preset"  // libx264 refuses it in avcodec_open2
        var badGraph = configuration([.file("\(dir)/g.flv")])
        badGraph.audioSources = [RecordConfiguration.defaultAudioSource(badGraph.audio), RecordConfiguration.defaultAudioSource(badGraph.audio)]
        badGraph.composition.videoFilter = "no-such-filter"
        let steps: [(name: String, config: RecordConfiguration)] = [
            ("a source", missingAudio),
            ("the video encoder", badEncoder),
            ("a filter graph, after two audio sources", badGraph),
            ("the server", configuration([push], listen: busy.address)),
            ("a file", lateFile),
            ("a file after the push's sink", lateFileOneSession),
        ]
        for (name, config) in steps {
            XCTAssertThrowsError(try Pipeline(config, quiet: true), name)  // once, so lazy libraries and globals are loaded
            let threads = Self.count("/proc/self/task"), descriptors = Self.count("/proc/self/fd")
            for _ in 0..<20 { XCTAssertThrowsError(try Pipeline(config, quiet: true), name) }
            XCTAssertEqual(Self.count("/proc/self/task"), threads, "\(name): threads left behind")
            XCTAssertEqual(Self.count("/proc/self/fd"), descriptors, "\(name): descriptors left behind")
        }
        busy.stop()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [], "nothing created")
    }

    /// FFmpeg's lines (libx264's options line on open, masked) go to the app's handler, not stderr.
    func testFFmpegsLogGoesToTheAppsHandler() throws {
        let lines = LockedLines()
        LogLevel.verbose.apply(handler: { lines.append($0) })
        defer { LogLevel.quiet.apply(handler: nil) }
        let stderrCopy = dup(2)
        let captured = NSTemporaryDirectory() + "livemux-stderr-\(UUID().uuidString)"
        let file = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        dup2(file, 2)
        let config = configuration([.network("rtmp://127.0.0.1:1/live/SECRETKEY"), .file("\(dir)/missing/x.flv")])
        XCTAssertThrowsError(try Pipeline(config, quiet: true))
        dup2(stderrCopy, 2)
        close(stderrCopy)
        close(file)
        defer { unlink(captured) }
        // stat, not String(contentsOfFile:): Foundation leaks a buffer reading an empty file (ASan).
        var info = stat()
        XCTAssertEqual(stat(captured, &info), 0)
        XCTAssertEqual(info.st_size, 0, "nothing straight to stderr")
        XCTAssertTrue(lines.all.contains { $0.contains("libx264") && $0.contains("bitrate=") }, "\(lines.all)")
        XCTAssertFalse(lines.all.contains { $0.hasSuffix("\n") })
    }
}

/// Lines a log handler received, from whichever thread logged them.
final class LockedLines: Sendable {
    private let lines = Locked<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
