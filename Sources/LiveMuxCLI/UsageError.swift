import Foundation
import LiveMux

/// A mistake on the command line: exit code 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
