import XCTest
@testable import LiveMuxCLI

extension XCTestCase {
    /// The usage error `record` answers `arguments` with (a failure when it takes them).
    func refusal(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try RecordCommand.parse(arguments)
            XCTFail("\(arguments) should be refused", file: file, line: line)
        } catch let error as UsageError {
            return error.description
        } catch {
            XCTFail("\(arguments): not a usage error: \(error)", file: file, line: line)
        }
        return ""
    }
}
