import XCTest
@testable import LiveMux

/// How a session groups its outputs into container writers, without a thread, socket or file.
final class OutputGraphTests: XCTestCase {
    typealias Writer = OutputGraph.Writer

    func outputs(_ specs: [(Destination, ContainerFormat)], listen: Bool = false) -> Outputs {
        var o = Outputs()
        o.destinations = specs.map { OutputSpec(destination: $0.0, format: $0.1) }
        o.listen = listen ? ListenAddress(port: 0) : nil
        return o
    }

    func testFilesSeekAndStreamsShareTheStreamingWriterOfTheirContainer() {
        let graph = OutputGraph(outputs([(.file("a.flv"), .flv), (.standardOutput, .asf), (.network("rtmp://h/app/k"), .flv),
                                         (.file("b.flv"), .flv), (.network("tcp://h:1"), .asf)]))
        XCTAssertEqual(graph.writers, [
            Writer(format: .flv, seekable: true, destinations: [0, 3]),
            Writer(format: .asf, seekable: false, destinations: [1, 4]),
            Writer(format: .flv, seekable: false, destinations: [2]),
        ])
    }

    /// A job whose outputs may be removed one by one gives each file a muxer of its own, whose
    /// trailer completes that file alone; streams still share theirs.
    func testFilesApartEachHaveAMuxer() {
        var o = outputs([(.file("a.flv"), .flv), (.file("b.flv"), .flv), (.network("rtmp://h/app/k"), .flv), (.standardOutput, .flv)])
        o.filesApart = true
        XCTAssertEqual(OutputGraph(o, fileSeeks: { _ in true }).writers, [
            Writer(format: .flv, seekable: true, destinations: [0]),
            Writer(format: .flv, seekable: true, destinations: [1]),
            Writer(format: .flv, seekable: false, destinations: [2, 3]),
        ])
    }

    func testViewersJoinTheStreamingWriterOfEachContainer() {
        let graph = OutputGraph(outputs([(.network("rtmp://h/app/k"), .flv)], listen: true))
        XCTAssertEqual(graph.writers, [
            Writer(format: .flv, seekable: false, destinations: [0], viewers: true),
            Writer(format: .asf, seekable: false, viewers: true),
        ])
    }

    func testTheCallersSinksComeAfterTheOutputsGiven() {
        let graph = OutputGraph(outputs([(.file("a.asf"), .asf)]), callerSinks: (.flv, false))
        XCTAssertEqual(graph.writers, [Writer(format: .asf, seekable: true, destinations: [0]),
                                       Writer(format: .flv, seekable: false, callerSinks: true)])
        let seeking = OutputGraph(Outputs(), callerSinks: (.asf, true))
        XCTAssertEqual(seeking.writers, [Writer(format: .asf, seekable: true, callerSinks: true)])
    }

    /// A file cut into segments restarts its muxer at each cut, so it shares its writer with none;
    /// stdout and URLs still share theirs.
    func testEachSegmentedFileHasAWriterOfItsOwn() {
        var o = outputs([(.file("a-%d.flv"), .flv), (.file("b-%d.flv"), .flv), (.standardOutput, .flv)])
        var policy = SegmentPolicy()
        policy.duration = 10
        o.segments = SegmentPlan(policy)
        XCTAssertEqual(OutputGraph(o).writers, [
            Writer(format: .flv, seekable: true, destinations: [0], segmented: true),
            Writer(format: .flv, seekable: true, destinations: [1], segmented: true),
            Writer(format: .flv, seekable: false, destinations: [2]),
        ])
    }

    /// A file output whose name is a pipe or FIFO (`/dev/stdout`, `mkfifo`) is a stream: it shares
    /// the streaming writer of its container with stdout, never a file's seeking one.
    func testAFileNameThatIsAStreamGetsTheStreamingWriter() {
        let graph = OutputGraph(outputs([(.file("a.flv"), .flv), (.file("/dev/stdout"), .flv), (.standardOutput, .flv),
                                         (.file("fifo"), .asf)]),
                                fileSeeks: { $0 == "a.flv" })
        XCTAssertEqual(graph.writers, [
            Writer(format: .flv, seekable: true, destinations: [0]),
            Writer(format: .flv, seekable: false, destinations: [1, 2]),
            Writer(format: .asf, seekable: false, destinations: [3]),
        ])
    }

    /// The default asks the name: nothing there yet becomes a regular file; /dev/null is a stream.
    func testTheDefaultLooksAtTheName() {
        XCTAssertTrue(OutputGraph.seeks(path: "/nonexistent-dir-\(UUID().uuidString)/a.flv"))
        XCTAssertFalse(OutputGraph.seeks(path: "/dev/null"))
        XCTAssertEqual(OutputGraph(outputs([(.file("/dev/null"), .flv)])).writers, [Writer(format: .flv, seekable: false, destinations: [0])])
    }
}
