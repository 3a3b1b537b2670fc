import Foundation
import XCTest
import FFmpeg
import LiveMux
import POSIX

/// An app that embeds LiveMux gets none of FFmpeg's own lines on its stderr unless it asks for
/// them with `LogLevel` (issue 42, item 12): before, a recording printed the AAC encoder's
/// `[aac @ 0x…] Qavg: …` at FFmpeg's default level.
final class LibraryLogTests: TemporaryDirectoryTestCase {
    /// Records 1 s of the built-in sources (AAC) and returns what reached fd 2 meanwhile.
    func recordCapturingStderr() throws -> String {
        var config = RecordConfiguration()
        (config.video.width, config.video.height) = (160, 120)
        config.realtime = false
        config.duration = 1
        config.outputs.destinations = [OutputSpec(destination: .file("\(dir)/r-\(UUID().uuidString).flv"), format: .flv)]
        let log = "\(dir)/stderr-\(UUID().uuidString).log"
        let file = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(file, 0)
        let saved = dup(2)
        dup2(file, 2)
        close(file)
        defer {
            dup2(saved, 2)
            close(saved)
        }
        let pipeline = try Pipeline(config)
        pipeline.start()
        try pipeline.wait()
        // Through FileHandle: FoundationEssentials' file reading (String(contentsOfFile:),
        // Data(contentsOf:)) leaks its 4 KiB buffer for an empty file, which LeakSanitizer reports.
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: log))
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }

    func testQuietUnlessAsked() throws {
        // FFmpeg's own default, as in an app that never set a level.
        FFmpegLog.setLevel(.info)
        let text = try recordCapturingStderr()
        XCTAssertFalse(text.contains("Qavg"), "FFmpeg's lines on the app's stderr: \(text)")
        XCTAssertEqual(text, "")

        // Asked for, they come, to the app's handler.
        let lines = Locked<[String]>([])
        LogLevel.verbose.apply(handler: { line in lines.withLock { $0.append(line) } })
        defer { LogLevel.quiet.apply(handler: nil) }
        XCTAssertEqual(try recordCapturingStderr(), "")
        XCTAssertTrue(lines.withLock { $0 }.contains { $0.contains("Qavg") }, "\(lines.withLock { $0 })")
    }
}
