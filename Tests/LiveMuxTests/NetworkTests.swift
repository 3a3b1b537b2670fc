import XCTest
@testable import LiveMux

final class MaskedURLTests: XCTestCase {
    func testRTMPStreamKeyIsMasked() {
        XCTAssertEqual(maskedURL("rtmp://127.0.0.1:1935/live/secretkey"), "rtmp://127.0.0.1:1935/live/****")
        XCTAssertEqual(maskedURL("rtmps://a.rtmp.youtube.com/live2/abcd-efgh-ijkl"), "rtmps://a.rtmp.youtube.com/live2/****")
        // A key with slashes in it goes whole.
        XCTAssertEqual(maskedURL("rtmp://host/app/key/more"), "rtmp://host/app/****")
        // No key: nothing to hide.
        XCTAssertEqual(maskedURL("rtmp://host/app"), "rtmp://host/app")
        XCTAssertEqual(maskedURL("rtmp://host/app/"), "rtmp://host/app/")
    }

    /// An RTMP URL without an application and a stream key cannot be published to (libavformat
    /// only says "Input/output error"): refused, with the form it needs.
    func testRTMPNeedsAnApplicationAndAKey() {
        XCTAssertEqual(rtmpURLProblem("rtmp://127.0.0.1:1935"),
                       "rtmp://127.0.0.1:1935 needs an application and a stream key: rtmp://HOST[:PORT]/APP/KEY")
        for url in ["rtmp://h", "rtmp://h/", "rtmp://h/live", "rtmp://h/live/", "rtmp://h//key", "RTMP://h/live"] {
            XCTAssertNotNil(rtmpURLProblem(url), url)
        }
        XCTAssertEqual(rtmpURLProblem("rtmps://u:pw@h/live"), "rtmps://****@h/live needs an application and a stream key: rtmps://HOST[:PORT]/APP/KEY")
        for url in ["rtmp://h/live/key", "rtmps://h:443/live2/a-b-c", "rtmp://h/app/key/more", "rtmp://h/app?slist=key",
                    "srt://h:9000", "tcp://h:5000", "rec.flv"] {
            XCTAssertNil(rtmpURLProblem(url), url)
        }
    }

    func testPasswordsAndSecretQueryValuesAreMasked() {
        XCTAssertEqual(maskedURL("rtmp://user:pa55@host/app/key"), "rtmp://****@host/app/****")
        XCTAssertEqual(maskedURL("srt://host:9000?streamid=secret&latency=200"), "srt://host:9000?streamid=****&latency=200")
        XCTAssertEqual(maskedURL("srt://host:9000?mode=caller&passphrase=hunter2hunter2"), "srt://host:9000?mode=caller&passphrase=****")
        XCTAssertEqual(maskedURL("rtmp://host/app?token=abc"), "rtmp://host/app?token=****")
        XCTAssertEqual(maskedURL("tcp://127.0.0.1:5000"), "tcp://127.0.0.1:5000")
        XCTAssertEqual(maskedURL("udp://239.0.0.1:1234?pkt_size=1316"), "udp://239.0.0.1:1234?pkt_size=1316")
        XCTAssertEqual(maskedURL("rec.flv"), "rec.flv")
    }

    /// The dashboard's control link carries its key in the fragment: every fragment value of an
    /// http(s) URL goes, anchors stay; other schemes keep a `#` inside the value they mask.
    func testAnHTTPFragmentsValuesAreMasked() {
        XCTAssertEqual(maskedURL("http://127.0.0.1:8080/#control=0123456789abcdef"), "http://127.0.0.1:8080/#control=****")
        XCTAssertEqual(maskedURL("http://h:1/?key=v1#control=c2&x=y"), "http://h:1/?key=****#control=****&x=****")
        XCTAssertEqual(maskedURL("https://h/page#top"), "https://h/page#top")
        XCTAssertEqual(maskedURL("srt://h:1?passphrase=abc#def"), "srt://h:1?passphrase=****")
        XCTAssertEqual(Set(secretParts(of: "http://h/#control=K3Y&b=V4L")), ["K3Y", "V4L"])
        let access = try! XCTUnwrap(ControlAccess(key: "k3y k3y&#0123456789"))
        let page = access.pageURL(dashboard: "http://127.0.0.1:8080/")
        XCTAssertEqual(page, "http://127.0.0.1:8080/#control=k3y%20k3y%26%230123456789", "percent-encoded, as URLSearchParams reads it")
        XCTAssertEqual(maskedURL(page), "http://127.0.0.1:8080/#control=****")
    }

    func testMaskedTextNeverContainsTheSecret() {
        for url in ["rtmp://h/live/K3Y", "rtmp://u:K3Y@h/a", "srt://h:1?passphrase=K3Y", "rtmp://h/a/b?x=K3Y"] {
            XCTAssertFalse(maskedURL(url).contains("K3Y"), url)
            XCTAssertFalse(Destination.network(url).description.contains("K3Y"), url)
        }
    }

    /// Found by scripts/fuzz url: a combining mark after a separator made one Swift Character with
    /// it, so the separator was not seen and the key was printed. FFmpeg cuts URLs by byte.
    func testCombiningMarkAfterASeparatorDoesNotHideTheSecret() {
        for url in ["rtmp://h/live/\u{301}K3Y", "srt://h:1?\u{301}x=1&passphrase=K3Y", "rtmp://u:K3Y@h/\u{301}a/K3Y",
                    "srt://h:1?x=\u{301}&streamid=K3Y"] {
            XCTAssertFalse(maskedURL(url).contains("K3Y"), url.debugDescription)
            XCTAssertTrue(secretParts(of: url).contains { $0.contains("K3Y") }, url.debugDescription)
        }
        XCTAssertEqual(maskedURL("rtmp://h/live/\u{301}K3Y"), "rtmp://h/live/****")
        // Found by scripts/fuzz url: Destination.parse found "://" by Character, so this was a "file"
        // whose description printed the key; it is a URL like any other, masked.
        let url = "tcp://\u{30D}u:K3Y@h:9000?token=K3Y"
        XCTAssertEqual(Destination.parse(url), .network(url))
        XCTAssertFalse(Destination.parse(url).description.unicodeScalars.map(String.init).joined().contains("K3Y"))
        XCTAssertEqual(Destination.parse("é://x"), .file("é://x"), "a scheme is ASCII, as FFmpeg reads it")
    }

    func testSecretPartsAreWhatMaskingHides() {
        XCTAssertEqual(Set(secretParts(of: "rtmp://u:pw1@h/app/key/x?t=tok")), ["u:pw1", "pw1", "key/x", "key", "x", "tok"])
        XCTAssertEqual(secretParts(of: "srt://h:1?passphrase=abcdefghijkl&latency=20"), ["abcdefghijkl"])
        XCTAssertEqual(secretParts(of: "tcp://127.0.0.1:5000"), [])
    }

    func testDestinationParse() {
        XCTAssertEqual(Destination.parse("-"), .standardOutput)
        XCTAssertEqual(Destination.parse("a.flv"), .file("a.flv"))
        XCTAssertEqual(Destination.parse("rtmp://h/a/k"), .network("rtmp://h/a/k"))
        XCTAssertEqual(Destination.parse("dir/x://y.flv"), .file("dir/x://y.flv"))
    }
}

final class OutputQueueTests: XCTestCase {
    func video(_ n: Int64, key: Bool = false) -> Chunk { Chunk(kind: .media(stream: .video, dts: n, isKeyframe: key), bytes: [1]) }
    func audio(_ n: Int64) -> Chunk { Chunk(kind: .media(stream: .audio, dts: n, isKeyframe: true), bytes: [2]) }

    func drain(_ q: inout OutputQueue) -> [Chunk.Kind] {
        var out: [Chunk.Kind] = []
        while let c = q.pop() { out.append(c.kind) }
        return out
    }

    func testBelowTheLimitNothingIsDropped() {
        var q = OutputQueue(limit: 10)
        XCTAssertEqual(q.push(video(0, key: true)), .queued)
        XCTAssertEqual(q.push(audio(1)), .queued)
        XCTAssertEqual(q.push(video(2)), .queued)
        XCTAssertEqual(q.dropped, 0)
        XCTAssertEqual(drain(&q).count, 3)
    }

    func testPastTheLimitVideoGoesFirstAndResumesAtAKeyframe() {
        var q = OutputQueue(limit: 4)
        _ = q.push(video(0, key: true))
        _ = q.push(video(1))
        _ = q.push(audio(2))
        _ = q.push(video(3))
        // Full: the queued non-key video after the keyframe goes, and so does the new one.
        XCTAssertEqual(q.push(video(4)), .dropped)
        XCTAssertEqual(q.dropped, 3)
        // Audio is never dropped.
        XCTAssertEqual(q.push(audio(5)), .queued)
        // Video stays skipped until the next keyframe…
        XCTAssertEqual(q.push(video(6)), .dropped)
        // …which is never dropped.
        XCTAssertEqual(q.push(video(7, key: true)), .queued)
        XCTAssertEqual(drain(&q), [video(0, key: true).kind, audio(2).kind, audio(5).kind, video(7, key: true).kind])
        XCTAssertEqual(q.push(video(8)), .queued, "after the keyframe video flows again")
    }

    func testOnlyUndroppableChunksPastTheHardLimitOverflow() {
        var q = OutputQueue(limit: 2, hardLimit: 4)
        var results: [OutputQueue.PushResult] = []
        for i in 0..<6 { results.append(q.push(audio(Int64(i)))) }
        XCTAssertEqual(results, [.queued, .queued, .queued, .queued, .overflow, .overflow])
    }

    func testRestartAtKeyframeKeepsTheHeaderAndTheNewestGOP() {
        var q = OutputQueue(limit: 100)
        let header = Chunk(kind: .header, bytes: [9])
        _ = q.push(header)
        _ = q.push(video(0, key: true))
        _ = q.push(audio(1))
        _ = q.push(video(2, key: true))
        _ = q.push(audio(3))
        q.restartAtKeyframe()
        XCTAssertEqual(drain(&q), [.header, video(2, key: true).kind, audio(3).kind])
        XCTAssertEqual(q.dropped, 2)
    }

    func testRestartWithoutKeyframeWaitsForOne() {
        var q = OutputQueue(limit: 100)
        _ = q.push(video(0))
        _ = q.push(audio(1))
        q.restartAtKeyframe()
        XCTAssertTrue(q.isEmpty)
        XCTAssertEqual(q.push(audio(2)), .dropped, "nothing before the keyframe")
        XCTAssertEqual(q.push(video(3)), .dropped)
        XCTAssertEqual(q.push(video(4, key: true)), .queued)
        XCTAssertEqual(q.push(audio(5)), .queued)
    }

    /// A restart looks only at what is still queued, keeps the header and the trailer, and ends
    /// a skip that an overflow started (the new connection starts at a keyframe anyway).
    func testRestartConsidersOnlyWhatIsStillQueuedAndKeepsTheTrailer() {
        var q = OutputQueue(limit: 3)
        _ = q.push(Chunk(kind: .header, bytes: [9]))
        _ = q.push(video(0, key: true))
        XCTAssertEqual(q.pop()?.kind, .header)
        XCTAssertEqual(q.pop()?.kind, video(0, key: true).kind)
        _ = q.push(video(1))
        _ = q.push(audio(2))
        _ = q.push(video(3, key: true))
        XCTAssertEqual(q.push(video(4)), .dropped, "full: the newest droppable video goes")
        XCTAssertTrue(q.skippingVideo)
        _ = q.push(Chunk(kind: .trailer, bytes: [8]))
        q.restartAtKeyframe()
        XCTAssertFalse(q.skippingVideo)
        XCTAssertFalse(q.awaitingKeyframe, "a keyframe is queued")
        XCTAssertEqual(drain(&q), [video(3, key: true).kind, .trailer], "before the keyframe: dropped; the trailer stays")
        XCTAssertEqual(q.dropped, 3, "v4 by the overflow, v1 and a2 by the restart")
    }

    /// Waiting for a keyframe after a restart drops media, never the end of the stream.
    func testATrailerWhileAwaitingAKeyframeIsQueued() {
        var q = OutputQueue(limit: 10)
        _ = q.push(video(0))
        q.restartAtKeyframe()
        XCTAssertTrue(q.awaitingKeyframe)
        XCTAssertEqual(q.push(video(1)), .dropped)
        XCTAssertEqual(q.push(Chunk(kind: .trailer, bytes: [8])), .queued)
        XCTAssertEqual(drain(&q), [.trailer])
    }
}

final class ReconnectPolicyTests: XCTestCase {
    func testBackoffDoublesUpToTheCapWithJitter() {
        let p = ReconnectPolicy(firstDelay: 0.5, maxDelay: 4, attempts: 5)
        XCTAssertEqual(p.delay(beforeAttempt: 1, random: 0.5), 0.5, accuracy: 0.001, "the middle of the jitter is the delay asked for")
        XCTAssertEqual(p.delay(beforeAttempt: 2, random: 0.5), 1.0, accuracy: 0.001)
        XCTAssertEqual(p.delay(beforeAttempt: 3, random: 0.5), 2.0, accuracy: 0.001)
        XCTAssertEqual(p.delay(beforeAttempt: 4, random: 0.5), 4.0, accuracy: 0.001)
        XCTAssertEqual(p.delay(beforeAttempt: 50, random: 0.5), 4.0, accuracy: 0.001, "capped")
        XCTAssertEqual(p.delay(beforeAttempt: 1, random: 0), 0.4, accuracy: 0.001, "jitter takes off at most 20%")
        XCTAssertEqual(p.delay(beforeAttempt: 1, random: 0.999999), 0.6, accuracy: 0.001, "and adds at most 20%")
    }

    /// Every wait lies in [0.8, 1.2) of its backoff, whatever the random number, so retries of
    /// many outputs spread out yet never wait much longer than asked.
    func testEveryWaitIsWithinTheJitterOfItsBackoff() {
        let p = ReconnectPolicy(firstDelay: 0.25, maxDelay: 6, attempts: 10)
        for n in 1...12 {
            let backoff = min(6, 0.25 * Double(1 << (n - 1)))
            for step in 0..<100 {
                let wait = p.delay(beforeAttempt: n, random: Double(step) / 100)
                XCTAssertGreaterThanOrEqual(wait, backoff * (1 - ReconnectPolicy.jitter) - 1e-12, "attempt \(n)")
                XCTAssertLessThan(wait, backoff * (1 + ReconnectPolicy.jitter), "attempt \(n)")
            }
        }
    }

    /// Out-of-range inputs stay within the bounds: an attempt number below 1 is the first, one
    /// past any exponent is the cap (no overflow), a random number outside [0, 1) is clamped.
    func testOutOfRangeInputsStayWithinTheBounds() {
        let p = ReconnectPolicy(firstDelay: 0.5, maxDelay: 10, attempts: 3)
        XCTAssertEqual(p.delay(beforeAttempt: 0, random: 0.5), 0.5, accuracy: 1e-9)
        XCTAssertEqual(p.delay(beforeAttempt: -3, random: 0.5), 0.5, accuracy: 1e-9)
        XCTAssertEqual(p.delay(beforeAttempt: Int.max, random: 0.5), 10, accuracy: 1e-9)
        XCTAssertEqual(p.delay(beforeAttempt: 1, random: -1), 0.4, accuracy: 1e-9)
        XCTAssertEqual(p.delay(beforeAttempt: 1, random: 7), 0.6, accuracy: 1e-9)
        let capped = ReconnectPolicy(firstDelay: 5, maxDelay: 2, attempts: 3)
        XCTAssertEqual(capped.delay(beforeAttempt: 1, random: 0.5), 2, accuracy: 1e-9, "the cap wins over the first delay")
    }
}

final class HTTPParsingTests: XCTestCase {
    func testRequestLine() {
        XCTAssertEqual(HTTPRequest.parse(Array("GET /live.flv HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
                       HTTPRequest(method: "GET", path: "/live.flv", isHTTP11: true))
        XCTAssertEqual(HTTPRequest.parse(Array("GET /live.asf?x=1 HTTP/1.0\r\n\r\n".utf8)),
                       HTTPRequest(method: "GET", path: "/live.asf", isHTTP11: false, query: "x=1"))
        // The index in JSON: asked for by the query or by the Accept header (any case).
        let json = HTTPRequest.parse(Array("GET /?a=b&format=json HTTP/1.1\r\n\r\n".utf8))
        XCTAssertEqual(json?.wantsJSON, true)
        let accept = HTTPRequest.parse(Array("HEAD / HTTP/1.1\r\nHost: x\r\naccept:  Application/JSON \r\n\r\n".utf8))
        XCTAssertEqual(accept?.accept, "Application/JSON")
        XCTAssertEqual(accept?.wantsJSON, true)
        XCTAssertEqual(HTTPRequest.parse(Array("GET /?format=jsonp HTTP/1.1\r\nAccept: text/html\r\n\r\n".utf8))?.wantsJSON, false)
        for bad in ["", "\r\n", "GET\r\n", "GET /a\r\n", "GET a HTTP/1.1\r\n", "get /a HTTP/1.1\r\n", "GET /a SPDY/3\r\n",
                    "GET  /a HTTP/1.1\r\n", "\u{00}\u{ff}\u{fe}\r\n"] {
            XCTAssertNil(HTTPRequest.parse(Array(bad.utf8)), bad.debugDescription)
        }
        XCTAssertNil(HTTPRequest.parse([0xff, 0xfe, 0x0d, 0x0a]))
    }

    func testListenAddress() {
        XCTAssertEqual(ListenAddress.parse("127.0.0.1:8080"), ListenAddress(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(ListenAddress.parse("8080"), ListenAddress(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(ListenAddress.parse(":9000"), ListenAddress(host: "127.0.0.1", port: 9000))
        XCTAssertEqual(ListenAddress.parse("0.0.0.0:80"), ListenAddress(host: "0.0.0.0", port: 80))
        XCTAssertEqual(ListenAddress.parse("localhost:8080"), ListenAddress(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(ListenAddress.parse("[::1]:8080"), ListenAddress(host: "::1", port: 8080))
        XCTAssertEqual(ListenAddress.parse("127.0.0.1:0"), ListenAddress(host: "127.0.0.1", port: 0), "the kernel picks the port")
        XCTAssertEqual(ListenAddress.parse("[::1]:8080")?.description, "[::1]:8080")
        for bad in ["", "x", "127.0.0.1:", "127.0.0.1:70000", "example.com:8080", "1.2.3:5", "::1:8080", "[::1]8080",
                    "[127.0.0.1]:80", "[::1:80", "127.0.0.1:+80", "127.0.0.1:٨٠"] {
            XCTAssertNil(ListenAddress.parse(bad), bad)
        }
        for (text, loopback) in [("8080", true), ("127.0.0.2:1", true), ("[::1]:1", true), ("localhost:1", true),
                                 ("0.0.0.0:1", false), ("[::]:1", false), ("192.168.1.2:1", false), ("[::ffff:127.0.0.1]:1", false)] {
            XCTAssertEqual(ListenAddress.parse(text)?.isLoopback, loopback, text)
        }
    }
}
