import XCTest
@testable import LiveMuxCLI
import LiveMux

final class SourceOptionsTests: XCTestCase {
    /// Sources are numbered in the order given; each -opt goes to the source of its kind it
    /// follows (the input counts as both), one given before any to the first.
    func testSourcesAndTheirOptionsInOrder() throws {
        let c = try RecordCommand.parse([
            "--video-opt", "framerate=15", "--video", "x11grab::0", "--video-opt", "video_size=640x480",
            "--audio", "pulse:mic", "--audio-opt", "channels=1", "--video", "v4l2:/dev/video0", "--video-opt", "input_format=mjpeg",
            "--audio", "pulse:desk.monitor", "--audio-opt", "sample_rate=44100", "-o", "a.flv",
        ]).configuration
        XCTAssertNil(c.input)
        XCTAssertEqual(c.videoSources.map(\.description), ["x11grab::0", "v4l2:/dev/video0"])
        XCTAssertEqual(c.videoSources.map(\.options), [["framerate": "15", "video_size": "640x480"], ["input_format": "mjpeg"]])
        XCTAssertEqual(c.audioSources.map(\.description), ["pulse:mic", "pulse:desk.monitor"])
        XCTAssertEqual(c.audioSources.map(\.options), [["channels": "1"], ["sample_rate": "44100"]])
    }

    func testAnInputIsTheFirstOfEachKindAndTakesBothKindsOfOptions() throws {
        let c = try RecordCommand.parse(["--input", "game.mp4", "--video-opt", "a=1", "--audio-opt", "b=2",
                                         "--audio", "pulse:mic", "--audio-opt", "c=3", "-o", "a.flv"]).configuration
        XCTAssertEqual(c.input?.options, ["a": "1", "b": "2"])
        XCTAssertEqual(c.audioSources.map(\.options), [["c": "3"]])
        XCTAssertThrowsError(try RecordCommand.parse(["--input", "a.mp4", "--input", "b.mp4", "-o", "a.flv"]))
    }

    func testGainsLayoutAndGraphs() throws {
        let c = try RecordCommand.parse(["--audio", "pulse:mic", "--audio", "pulse:desk.monitor", "--volume", "a1=-6dB",
                                         "--mute", "a0", "--filter-complex", "[v0]hflip[vout]", "-o", "a.flv"]).configuration
        XCTAssertEqual(c.composition.gains[1]!, 0.501, accuracy: 0.001)
        XCTAssertEqual(c.composition.gains[0], 0)
        XCTAssertEqual(c.composition.videoGraph, "[v0]hflip[vout]")
        XCTAssertEqual(try RecordCommand.parse(["--layout", "pip-top-left", "-o", "a.flv"]).configuration.composition.layout, .pipTopLeft)
        XCTAssertNil(c.composition.audioGraph)
        let filters = try RecordCommand.parse(["--vf", "hflip", "--af", "volume=2", "-o", "a.flv"]).configuration.composition
        XCTAssertEqual([filters.videoFilter, filters.audioFilter], ["hflip", "volume=2"])
        XCTAssertThrowsError(try RecordCommand.parse(["--audio", "pulse:a", "--audio", "pulse:b", "--volume", "a1=2",
                                                      "--filter-complex", "[a0][a1]amix[aout]", "-o", "a.flv"]))
    }

    func testWhatCannotWorkIsAUsageError() throws {
        let cases: [[String]] = [
            ["--volume", "a1=2"],                                   // one audio source
            ["--volume", "v0=2"],
            ["--volume", "a0=-1"],
            ["--filter-complex", "[v0]null[vout];[a0]anull[aout]"],  // both kinds in one graph
            ["--filter-complex", "[v0]null[vout]", "--filter-complex", "[v0]hflip[vout]"],
            ["--layout", "pip", "--filter-complex", "[v0]hflip[vout]"],  // the graph places the sources
            ["--no-video", "--video", "x11grab::0"],
            ["--no-audio", "--af", "volume=2"],
            ["--video", "-", "--audio", "-"],
            ["--vf", ""],
        ]
        for arguments in cases {
            XCTAssertThrowsError(try RecordCommand.parse(arguments + ["-o", "a.flv"]), "\(arguments)") { error in
                XCTAssertTrue(error is UsageError, "\(arguments): \(error)")
            }
        }
    }
}
