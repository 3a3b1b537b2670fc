import XCTest
import FFmpeg
@testable import LiveMux

final class InterleaverTests: XCTestCase {
    let videoBase = Rational(1, 30)
    let audioBase = Rational(1, 48000)

    func packet(_ stream: StreamKind, _ dts: Int64, promise: Int64? = nil) -> EncodedPacket {
        let p = try! Packet()
        p.dts = dts
        p.pts = dts
        return EncodedPacket(stream: stream, packet: p, timeBase: stream == .video ? videoBase : audioBase,
                             nextDTSAtLeast: promise)
    }

    /// As the pipeline's encoders promise: video one frame on, audio one AAC frame on.
    func promised(_ stream: StreamKind, _ dts: Int64) -> EncodedPacket {
        packet(stream, dts, promise: dts + (stream == .video ? 1 : 1024))
    }

    func order(_ i: inout Interleaver) -> [String] {
        var out: [String] = []
        while let p = i.next() { out.append("\(p.stream == .video ? "v" : "a")\(p.dts)") }
        return out
    }

    func testLowerTimestampFirstAcrossTimeBases() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 0))    // 0 ms
        i.push(packet(.video, 1))    // 33.3 ms
        i.push(packet(.audio, 1024)) // 21.3 ms
        i.push(packet(.audio, 2048)) // 42.7 ms
        XCTAssertEqual(order(&i), ["v0", "a1024", "v1"], "then waits: audio 2048 may not be next before video 2 arrives")
    }

    func testWaitsForTheOtherStream() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 0))
        XCTAssertNil(i.next(), "audio has not ended and could still come first")
        i.push(packet(.audio, 0))
        XCTAssertNotNil(i.next())
    }

    func testEndOfOneStreamReleasesTheOther() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 0))
        i.push(packet(.video, 1))
        i.end(.audio)
        XCTAssertEqual(order(&i), ["v0", "v1"])
        XCTAssertFalse(i.isFinished)
        i.end(.video)
        XCTAssertTrue(i.isFinished)
    }

    func testEqualTimestampsGoVideoFirst() {
        var i = Interleaver(streams: [.audio, .video])
        i.push(packet(.audio, 48000))  // 1 s
        i.push(packet(.video, 30))     // 1 s
        i.end(.audio); i.end(.video)
        XCTAssertEqual(order(&i), ["v30", "a48000"])
    }

    func testDifferentTimeBasesCompareExactly() {
        // 1/3 s in 1/30 is 10; 16000 in 1/48000 is 1/3 s; 16001 is just after.
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.audio, 16001))
        i.push(packet(.video, 10))
        i.end(.video); i.end(.audio)
        XCTAssertEqual(order(&i), ["v10", "a16001"])
    }

    func testForceDecidesAmongQueued() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 5))
        XCTAssertNil(i.next())
        XCTAssertEqual(i.next(force: true)?.dts, 5)
    }

    func testManyPacketsStayOrdered() {
        var i = Interleaver(streams: [.video, .audio])
        for n in 0..<300 { i.push(packet(.video, Int64(n))) }
        for n in 0..<470 { i.push(packet(.audio, Int64(n * 1024))) }
        i.end(.video); i.end(.audio)
        var last: EncodedPacket? = nil
        var count = 0
        while let p = i.next() {
            if let l = last { XCTAssertGreaterThanOrEqual(Timestamp.compare(p.dts, p.timeBase, l.dts, l.timeBase), 0) }
            last = p
            count += 1
        }
        XCTAssertEqual(count, 770)
    }

    // MARK: promises about the next DTS

    func testAudioGoesWhenVideoPromisedALaterFrame() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(promised(.video, 0))      // next video at 33.3 ms or later
        XCTAssertNil(i.next(), "audio has sent nothing, so promised nothing")
        i.push(promised(.audio, 0))      // 0 ms: after video 0 (ties go video first), before video 1
        i.push(promised(.audio, 1024))   // 21.3 ms
        i.push(promised(.audio, 2048))   // 42.7 ms: not before video's promise of 33.3 ms
        XCTAssertEqual(order(&i), ["v0", "a0", "a1024"], "then waits: video 1 (33.3 ms) may come before audio 2048")
        i.push(promised(.video, 1))      // next video at 66.7 ms or later
        XCTAssertEqual(order(&i), ["v1", "a2048"], "then waits: audio promised 64 ms, video 66.7 ms")
    }

    func testVideoGoesWhenAudioPromisedALaterPacket() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(promised(.audio, 0))      // next audio at 21.3 ms or later
        i.push(promised(.video, 0))
        XCTAssertEqual(order(&i), ["v0", "a0"], "then waits: audio 1024 (21.3 ms) may come before video 1")
        i.push(promised(.video, 1))      // 33.3 ms
        XCTAssertNil(i.next(), "audio promised only 21.3 ms")
        i.push(promised(.audio, 1024))   // next audio at 42.7 ms or later
        XCTAssertEqual(order(&i), ["a1024", "v1"])
    }

    func testPromiseEqualToTheOtherHeadFollowsStreamOrder() {
        // Video promises 1 s, audio has a packet at exactly 1 s: video 30 would go first, so wait.
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 29, promise: 30))
        i.push(packet(.audio, 48000))
        XCTAssertEqual(i.next()?.dts, 29)
        XCTAssertNil(i.next(), "a video packet at 1 s would go before audio at 1 s")
        // Audio promises 1 s, video has a packet at exactly 1 s: video goes first anyway.
        var j = Interleaver(streams: [.video, .audio])
        j.push(packet(.audio, 47000, promise: 48000))
        j.push(packet(.video, 30))
        XCTAssertEqual(j.next()?.stream, .audio)
        XCTAssertEqual(j.next()?.dts, 30, "audio's next cannot be before 1 s, and video goes first on a tie")
    }

    func testNoPromiseStillWaits() {
        var i = Interleaver(streams: [.video, .audio])
        i.push(packet(.video, 0, promise: 1))
        i.push(packet(.audio, 0))        // no promise: its next could be at 1 sample
        i.push(packet(.video, 1, promise: 2))
        XCTAssertEqual(order(&i), ["v0", "a0"], "video 1 waits for audio's next packet")
        i.push(promised(.audio, 1))      // a producer without a promise may send anything later
        XCTAssertEqual(order(&i), ["a1"])
        XCTAssertEqual(i.brokenPromises, 0)
    }

    func testPromiseIsOnlyTheLastPacketsOfItsStream() {
        // An empty stream's promise counts; once the stream has queued packets, its head does.
        var i = Interleaver(streams: [.video, .audio])
        i.push(promised(.audio, 0))
        i.push(packet(.audio, 1024))     // no promise from here on
        XCTAssertNil(i.next(), "video promised nothing")
        i.push(promised(.video, 0))
        XCTAssertEqual(order(&i), ["v0", "a0", "a1024"], "audio 1024 (21.3 ms) is before video's promise (33.3 ms)")
        i.push(promised(.video, 1))
        XCTAssertNil(i.next(), "audio's last packet promised nothing")
    }

    func testStartAtZeroLetsTheFirstVideoFrameGo() {
        var i = Interleaver(streams: [.video, .audio], startAtZero: true)
        i.push(promised(.audio, 0))
        XCTAssertNil(i.next(), "video's first packet may be at 0 too, and would go first")
        i.push(promised(.video, 0))
        XCTAssertEqual(order(&i), ["v0", "a0"])
        var j = Interleaver(streams: [.video, .audio], startAtZero: true)
        j.push(promised(.video, 0))
        XCTAssertEqual(order(&j), ["v0"], "audio cannot start before 0, and video goes first on a tie")
        j.push(promised(.video, 1))
        XCTAssertNil(j.next(), "audio may still come before 33.3 ms")
        var k = Interleaver(streams: [.video, .audio])
        k.push(promised(.video, 0))
        XCTAssertNil(k.next(), "without startAtZero audio could start earlier")
    }

    func testABrokenPromiseIsCounted() {
        var i = Interleaver(streams: [.video, .audio])
        i.stopsAtBrokenPromise = false  // as in release builds, which count and go on
        i.push(packet(.audio, 0, promise: 2048))
        i.push(packet(.audio, 1024))
        XCTAssertEqual(i.brokenPromises, 1)
        i.push(packet(.audio, 2048, promise: 3072))
        i.push(packet(.audio, 3072))
        XCTAssertEqual(i.brokenPromises, 1, "a kept promise is not counted")
    }

    /// Two producers, each keeping its promise with random gaps (video skips slots, audio is
    /// contiguous from a random offset), pushing in a random order between them, with the mux
    /// thread taking whatever it may after every push: the output is exactly the sorted merge, no
    /// packet leaves later than without promises, and many leave earlier.
    func testRandomizedPromisesNeverReorder() {
        var rng = SystemRandomNumberGenerator()
        var earlier = 0, total = 0
        for round in 0..<200 {
            var video: [Int64] = [], audio: [Int64] = []
            var v = Int64.random(in: 0...3, using: &rng)
            while video.count < 60 { video.append(v); v += Int64.random(in: 1...3, using: &rng) }
            var a = Int64.random(in: 0...1023, using: &rng)
            while audio.count < 90 { audio.append(a); a += 1024 }
            let seed = UInt64.random(in: 0...UInt64.max, using: &rng)

            /// The order out, and for each packet out how many pushes had happened when it left.
            func run(promising: Bool) -> (order: [String], leftAfter: [String: Int]) {
                var pushOrder = SplitMix(seed: seed)
                var i = Interleaver(streams: [.video, .audio])
                var out: [String] = [], leftAfter: [String: Int] = [:]
                var (nv, na, pushes) = (0, 0, 0)
                while nv < video.count || na < audio.count {
                    // The last two packets of each stream promise nothing, as when the audio encoder flushes.
                    if na == audio.count || (nv < video.count && pushOrder.next() % 2 == 0) {
                        i.push(promising && nv < video.count - 2 ? promised(.video, video[nv]) : packet(.video, video[nv]))
                        nv += 1
                    } else {
                        i.push(promising && na < audio.count - 2 ? promised(.audio, audio[na]) : packet(.audio, audio[na]))
                        na += 1
                    }
                    pushes += 1
                    if nv == video.count { i.end(.video) }
                    if na == audio.count { i.end(.audio) }
                    while let p = i.next() {
                        let name = "\(p.stream == .video ? "v" : "a")\(p.dts)"
                        out.append(name)
                        leftAfter[name] = pushes
                    }
                }
                XCTAssertTrue(i.isFinished)
                XCTAssertEqual(i.brokenPromises, 0)
                return (out, leftAfter)
            }
            let with = run(promising: true), without = run(promising: false)
            // The exact merge: by time (video 1/30 s is 1600 samples), video first on a tie.
            let merged = (video.map { (name: "v\($0)", time: $0 * 1600, order: 0) } + audio.map { (name: "a\($0)", time: $0, order: 1) })
                .sorted { ($0.time, $0.order) < ($1.time, $1.order) }.map(\.name)
            XCTAssertEqual(with.order, merged, "round \(round)")
            XCTAssertEqual(without.order, merged, "round \(round)")
            for name in merged {
                XCTAssertLessThanOrEqual(with.leftAfter[name]!, without.leftAfter[name]!, "\(name), round \(round)")
                if with.leftAfter[name]! < without.leftAfter[name]! { earlier += 1 }
                total += 1
            }
        }
        XCTAssertGreaterThan(earlier, total / 10, "promises let packets leave earlier")
    }
}

/// A small seeded generator, so both runs of one round see the same push order.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
