import Foundation
import XCTest

/// Headless Chromium driven by Selenium through chromedriver (scripts/browser): a page loaded,
/// acted on as a person would, and read back.
enum Browser {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"
    /// Debian's python3-selenium is importable by the system's python alone (scripts/browser's #!).
    static let python = "/usr/bin/python3"

    /// Skips the test where scripts/setup --test has not installed the browser (CI installs it).
    static func skipUnlessAvailable() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: chromium)
                          && FileManager.default.isExecutableFile(atPath: chromedriver),
                          "chromium or chromium-driver missing: run scripts/setup --test")
        let selenium = try Tools.run(python, ["-c", "import selenium"])
        try XCTSkipUnless(selenium.status == 0, "python3-selenium missing: run scripts/setup --test")
    }

    /// What scripts/browser printed: each --eval's value (JSON text) in order, and every other
    /// line (console messages and script errors).
    struct Answer {
        let status: Int32
        let evals: [String]
        let console: [String]
        let stderr: String

        /// The value of the `index`th --eval.
        func value(_ index: Int) throws -> Any {
            let text = try XCTUnwrap(evals.indices.contains(index) ? evals[index] : nil, "no eval \(index): \(evals), \(stderr)")
            return try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
        }
    }

    /// Runs scripts/browser on `url` with `arguments` (steps, --seconds, --eval, --dom, --screenshot).
    static func open(_ url: String, _ arguments: [String], timeout: Double = 120) throws -> Answer {
        let script = Tools.packageRoot.appendingPathComponent("scripts/browser").path
        let r = try Tools.run(script, [url] + arguments, timeout: timeout)
        let lines = r.stdoutText.split(separator: "\n").map(String.init)
        return Answer(status: r.status, evals: lines.filter { $0.hasPrefix("eval: ") }.map { String($0.dropFirst(6)) },
                      console: lines.filter { !$0.hasPrefix("eval: ") }, stderr: r.stderr)
    }
}
