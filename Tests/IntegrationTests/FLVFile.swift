import Foundation
import XCTest

/// An FLV file split into its tags by a reader written for the tests (not LiveMux's writer):
/// checks the file header and every PreviousTagSize on the way.
struct FLVFile {
    struct Tag {
        let type: UInt8
        let timestamp: Int64
        let body: [UInt8]
    }

    let flags: UInt8
    let tags: [Tag]

    init(path: String) throws {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func be(_ at: Int, _ n: Int) -> Int { (at..<(at + n)).reduce(0) { $0 << 8 | Int(b[$1]) } }
        XCTAssertEqual(Array(b.prefix(4)), Array("FLV".utf8) + [1], "FLV signature and version 1")
        XCTAssertEqual(be(5, 4), 9, "header size")
        XCTAssertEqual(be(9, 4), 0, "PreviousTagSize0")
        flags = b[4]
        var tags: [Tag] = []
        var i = 13
        while i + 11 <= b.count {
            let size = be(i + 1, 3)
            guard i + 11 + size + 4 <= b.count else {
                XCTFail("tag at \(i) runs past the end")
                break
            }
            let timestamp = Int64(be(i + 4, 3) | Int(b[i + 7]) << 24)
            XCTAssertEqual(be(i + 8, 3), 0, "stream id")
            tags.append(Tag(type: b[i], timestamp: timestamp, body: Array(b[(i + 11)..<(i + 11 + size)])))
            XCTAssertEqual(be(i + 11 + size, 4), 11 + size, "PreviousTagSize after the tag at \(i)")
            i += 11 + size + 4
        }
        XCTAssertEqual(i, b.count, "the tags fill the file")
        self.tags = tags
    }

    var video: [Tag] { tags.filter { $0.type == 9 } }

    /// True when 4-byte lengths tile `bytes` exactly (length-prefixed NAL units, no start codes).
    static func isLengthPrefixed(_ bytes: ArraySlice<UInt8>) -> Bool {
        var i = bytes.startIndex
        while i + 4 <= bytes.endIndex {
            let n = bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard n > 0 else { return false }
            i += 4 + n
        }
        return i == bytes.endIndex && !bytes.isEmpty
    }
}
