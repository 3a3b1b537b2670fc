import XCTest
@testable import LiveMuxCLI
import LiveMux

/// Where `-f` stands (issue 32, item 5): before its `-o`, or after the last `-o`; between two `-o`
/// it is refused when it could be read as the previous one's or disagrees with the next name.
final class FormatPlacementTests: XCTestCase {
    func formats(_ arguments: [String]) throws -> [ContainerFormat] {
        try RecordCommand.parse(arguments).configuration.outputs.destinations.map(\.format)
    }

    /// Two -f with no -o between name one output twice (issue 52, item 12: the second was taken silently).
    func testTwoFormatsInARowAreRefused() {
        XCTAssertEqual(refusal(["-o", "z.flv", "-f", "asf", "-f", "flv"]),
                       "-f asf and -f flv come one after the other, with no -o between: each -f names the container of the next -o; give one")
        XCTAssertTrue(refusal(["-f", "flv", "-f", "flv", "-o", "-"]).hasPrefix("-f flv and -f flv come one after the other"))
    }

    func testUnmistakablePlacesAreKept() throws {
        XCTAssertEqual(try formats(["-o", "-", "-f", "flv"]), [.flv], "after the last -o: that one's, as the README shows")
        XCTAssertEqual(try formats(["-f", "flv", "-o", "x"]), [.flv])
        XCTAssertEqual(try formats(["-f", "flv", "-o", "-"]), [.flv])
        // The previous -o's name fixes its container: the -f is the next one's.
        XCTAssertEqual(try formats(["-o", "a.asf", "-f", "flv", "-o", "-"]), [.asf, .flv])
        // The previous -o has its own -f.
        XCTAssertEqual(try formats(["-f", "asf", "-o", "-", "-f", "flv", "-o", "x.flv"]), [.asf, .flv])
        let mismatched = try RecordCommand.parse(["-f", "flv", "-o", "x.asf", "-f", "asf", "-o", "y.flv"])
        XCTAssertEqual(mismatched.configuration.outputs.destinations.map(\.format), [.flv, .asf])
        XCTAssertEqual(mismatched.warnings.count, 2, "a name that disagrees with its own -f still only warns")
        // RTMP carries only FLV, so -f asf after it cannot be its.
        XCTAssertEqual(try formats(["-o", "rtmp://h/app/k", "-f", "asf", "-o", "tcp://h:5000"]), [.flv, .asf])
    }

    /// `-o - -f flv -o fx.asf` wrote ASF to stdout and FLV into fx.asf.
    func testAnFThatDisagreesWithTheNextNameIsRefused() {
        let message = refusal(["-o", "-", "-f", "flv", "-o", "fx.asf"])
        XCTAssertEqual(message, "-f flv between -o - and -o fx.asf would apply to fx.asf, the next -o, whose name says ASF:"
                       + " -f names the container of the next -o. For stdout write -f flv -o -;"
                       + " for fx.asf give stdout its own -f first: -f asf -o - -f flv -o fx.asf")
        XCTAssertTrue(refusal(["-o", "a.asf", "-f", "flv", "-o", "b.asf"]).contains("whose name says ASF"))
        XCTAssertTrue(refusal(["-o", "-", "-f", "asf", "-o", "x.mp4"]).contains("whose name says MP4"))
    }

    func testAnFThatCouldBelongToEitherIsRefused() {
        XCTAssertTrue(refusal(["-o", "-", "-f", "flv", "-o", "x.flv"]).hasPrefix("-f flv between -o - and -o x.flv could be meant for stdout or for x.flv"))
        let rtmp = refusal(["-o", "rtmp://h/app/SECRETKEY", "-f", "flv", "-o", "-"])
        XCTAssertTrue(rtmp.contains("could be meant for rtmp://h/app/**** or for stdout"), rtmp)
        XCTAssertTrue(rtmp.contains("-f flv -o rtmp://h/app/**** -f flv -o -"), rtmp)
        XCTAssertFalse(rtmp.contains("SECRETKEY"), "the key is masked")
        XCTAssertTrue(refusal(["-o", "tcp://h:5000", "-f", "asf", "-o", "-"]).contains("could be meant for tcp://h:5000 or for stdout"))
        XCTAssertTrue(refusal(["-o", "b", "-f", "flv", "-o", "c.flv"]).contains("-f asf|flv -o b -f flv -o c.flv"))
    }
}
