import XCTest
@testable import LiveMuxCLI
@testable import LiveMux

/// The progress line names each output that failed while the others go on, numbered from 1 in
/// the order given; outputs writing or finished are not named.
final class ProgressLineTests: XCTestCase {
    func testFailedOutputsAreNamedByTheirPlace() {
        var s = StatisticsSnapshot()
        s.outputKeys = ["o0", "o1", "o2"]
        s.outputStates = ["o0": .finished, "o1": .failed("fifo was closed by its reader"), "o2": .writing]
        XCTAssertTrue(ProgressLine.format(s).hasSuffix(" latency99=0ms out2=failed"), ProgressLine.format(s))
        XCTAssertTrue(ProgressLine.formatRemux(s).hasSuffix(" dropped=0 out2=failed"), ProgressLine.formatRemux(s))
        s.outputStates["o1"] = .writing
        XCTAssertFalse(ProgressLine.format(s).contains("out"), ProgressLine.format(s))
    }

    /// Audio alone shows no frames, frame rate or A/V offset, which mean nothing without video;
    /// with video they are there (issue 42, item 9: audio-only showed `frames=0 av=-580ms`).
    func testAudioOnlyShowsNoVideoFields() {
        var s = StatisticsSnapshot()
        s.avOffsetMs = -580
        s.sources = [SourceSnapshot(label: "a0", kind: .audio, name: "lavfi:sine", state: .live, peakDBFS: -21)]
        let audio = ProgressLine.format(s)
        XCTAssertTrue(audio.hasPrefix("time=00:00:00.00 bitrate="), audio)
        XCTAssertFalse(audio.contains("frames=") || audio.contains("fps=") || audio.contains("av="), audio)
        s.sources.insert(SourceSnapshot(label: "v0", kind: .video, name: "lavfi:testsrc2", state: .live), at: 0)
        XCTAssertTrue(ProgressLine.format(s).contains(" frames=0 fps=0.0 bitrate=") && ProgressLine.format(s).contains(" av=-580.0ms "),
                      ProgressLine.format(s))
    }

    /// A source muted through the control API says so, not a level nobody hears (issue 52, item 10).
    func testAMutedSourceSaysMuted() {
        var s = StatisticsSnapshot()
        s.sources = [SourceSnapshot(label: "a0", kind: .audio, name: "lavfi:sine", state: .live, peakDBFS: -21),
                     SourceSnapshot(label: "a1", kind: .audio, name: "lavfi:sine", state: .live, peakDBFS: -18, muted: true)]
        XCTAssertTrue(ProgressLine.format(s).hasSuffix(" a0=-21dB a1=muted"), ProgressLine.format(s))
    }

    /// Once every source ended the run is over but for its trailers: a periodic line then would
    /// come just before the last one with other numbers (issue 42, item 9), so none is printed.
    func testNoPeriodicLineOnceEverySourceEnded() {
        var s = StatisticsSnapshot()
        XCTAssertFalse(ProgressLine.sourcesEnded(s), "no sources known: `mux` goes on printing")
        s.sources = [SourceSnapshot(label: "v0", kind: .video, name: "v", state: .ended),
                     SourceSnapshot(label: "a0", kind: .audio, name: "a", state: .live)]
        XCTAssertFalse(ProgressLine.sourcesEnded(s))
        s.sources[1].state = .ended
        XCTAssertTrue(ProgressLine.sourcesEnded(s))
    }
}
