import XCTest
import FFmpeg
@testable import LiveMux

/// How a recording's format is chosen from the options and the source (issue 18, item 2).
final class FormatResolutionTests: XCTestCase {
    private func video(_ s: VideoSettings, _ source: SourceFormat) -> (VideoFormat, [String]) {
        var notes: [String] = []
        let f = VideoFormat.resolve(s, source: source, report: { notes.append($0) })
        return (f, notes)
    }

    private func audio(_ s: AudioSettings, _ source: SourceFormat) -> (AudioFormat, [String]) {
        var notes: [String] = []
        let f = AudioFormat.resolve(s, source: source, report: { notes.append($0) })
        return (f, notes)
    }

    private func source(_ width: Int = 0, _ height: Int = 0, rate: Rational = Rational(0, 1), average: Rational = Rational(0, 1),
                        sampleRate: Int = 0, channels: Int = 0) -> SourceFormat {
        var f = SourceFormat()
        (f.width, f.height, f.frameRate, f.averageFrameRate, f.sampleRate, f.channels) = (width, height, rate, average, sampleRate, channels)
        return f
    }

    func testVideoKeepsTheSourcesFormat() {
        let (f, notes) = video(VideoSettings(), source(320, 240, rate: Rational(25, 1)))
        XCTAssertEqual(f, VideoFormat(width: 320, height: 240, fps: FrameRate(25)!))
        XCTAssertEqual(notes, [])
        XCTAssertEqual(video(VideoSettings(), source(640, 480, rate: Rational(30000, 1001))).0.fps, FrameRate(30000, 1001))
    }

    func testVideoOptionsWin() {
        var s = VideoSettings()
        (s.width, s.height, s.fps) = (1280, 720, FrameRate(30000, 1001))
        let (f, notes) = video(s, source(320, 240, rate: Rational(25, 1)))
        XCTAssertEqual(f, VideoFormat(width: 1280, height: 720, fps: FrameRate(30000, 1001)!))
        XCTAssertEqual(notes, [])
        XCTAssertEqual(f.gopFrames(2), 60, "2 s at 29.97 fps")
    }

    func testVideoWithoutAUsableRate() {
        // A variable-rate file: r_frame_rate is its time base; the average is used, with a warning.
        let (vfr, vfrNotes) = video(VideoSettings(), source(320, 240, rate: Rational(90000, 1), average: Rational(2997, 100)))
        XCTAssertEqual(vfr.fps, FrameRate(2997, 100))
        XCTAssertEqual(vfrNotes.count, 1)
        XCTAssertTrue(vfrNotes[0].contains("no fixed frame rate (90000/1") && vfrNotes[0].contains("--fps"), vfrNotes[0])
        // A steady rate beyond 240 fps is a rate, not "no fixed frame rate" (issue 32, item 12):
        // a lavfi output (no average) and a file whose average agrees.
        for average in [Rational(0, 1), Rational(1000, 1)] {
            let (fast, fastNotes) = video(VideoSettings(), source(160, 120, rate: Rational(1000, 1), average: average))
            XCTAssertEqual(fast.fps, FrameRate(30))
            XCTAssertEqual(fastNotes, ["the source runs at 1000 fps, outside the 1 to 240 fps livemux records at: using 30 fps (give --fps to choose)"])
        }
        // Nothing known at all: 30 fps and a warning; a lavfi output says 1/0 when it cannot tell.
        for unknown in [Rational(0, 1), Rational(1, 0), Rational(0, 0)] {
            let (f, notes) = video(VideoSettings(), source(320, 240, rate: unknown, average: unknown))
            XCTAssertEqual(f.fps, FrameRate(30), "\(unknown)")
            XCTAssertEqual(notes, ["the source gives no frame rate: using 30 fps (give --fps to choose)"], "\(unknown)")
        }
    }

    func testVideoSizes() {
        let (odd, oddNotes) = video(VideoSettings(), source(321, 241, rate: Rational(25, 1)))
        XCTAssertEqual([odd.width, odd.height], [320, 240], "4:2:0 needs even sizes")
        XCTAssertEqual(oddNotes.count, 1)
        let (unknown, notes) = video(VideoSettings(), source(rate: Rational(25, 1)))
        XCTAssertEqual([unknown.width, unknown.height], [1280, 720])
        XCTAssertEqual(notes.count, 1)
    }

    func testAudioKeepsTheSourcesFormat() {
        let (f, notes) = audio(AudioSettings(), source(sampleRate: 44100, channels: 1))
        XCTAssertEqual(f, AudioFormat(sampleRate: 44100, channels: 1))
        XCTAssertEqual(notes, [])
        var s = AudioSettings()
        (s.sampleRate, s.channels) = (48000, 2)
        XCTAssertEqual(audio(s, source(sampleRate: 44100, channels: 1)).0, AudioFormat(sampleRate: 48000, channels: 2), "options win")
    }

    func testAudioMadeOneAACTakes() {
        // 37.8 kHz (CD-ROM XA) is not an AAC rate: the nearest, 32 kHz, with a note.
        let (xa, xaNotes) = audio(AudioSettings(), source(sampleRate: 37800, channels: 2))
        XCTAssertEqual(xa.sampleRate, 32000)
        XCTAssertEqual(xaNotes.count, 1)
        XCTAssertTrue(xaNotes[0].contains("37800") && xaNotes[0].contains("32000"), xaNotes[0])
        XCTAssertEqual(audio(AudioSettings(), source(sampleRate: 192000, channels: 2)).0.sampleRate, 96000)
        let (surround, notes) = audio(AudioSettings(), source(sampleRate: 48000, channels: 6))
        XCTAssertEqual(surround, AudioFormat(sampleRate: 48000, channels: 2))
        XCTAssertEqual(notes.count, 1)
        let (unknown, unknownNotes) = audio(AudioSettings(), source())
        XCTAssertEqual(unknown, AudioFormat(sampleRate: 48000, channels: 2))
        XCTAssertEqual(unknownNotes.count, 2)
    }

    /// The built-in sources are made in the default format, so they need no converting.
    func testBuiltInSourcesMakeTheDefaults() {
        XCTAssertEqual(RecordConfiguration.defaultVideoSource(VideoSettings()).url, "testsrc2=size=1280x720:rate=30")
        XCTAssertEqual(RecordConfiguration.defaultAudioSource(AudioSettings()).url, "sine=frequency=440:sample_rate=48000,aformat=sample_fmts=fltp:channel_layouts=stereo")
        var v = VideoSettings()
        (v.width, v.height, v.fps) = (320, 240, FrameRate(30000, 1001))
        XCTAssertEqual(RecordConfiguration.defaultVideoSource(v).url, "testsrc2=size=320x240:rate=30000/1001")
    }
}
