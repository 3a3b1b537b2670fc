import Foundation
import LiveMux

/// An `-o` value that keeps its secret off the command line, which every user of the machine
/// reads in `ps` (/proc/PID/cmdline): `@FILE` is the output named by FILE's first line, and
/// `${NAME}` in a URL is the environment variable NAME (/proc/PID/environ is readable by the
/// same user only). Everything else is taken as it is.
enum SecretOutputArgument {
    /// The output `argument` stands for.
    static func resolve(_ argument: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let text = argument.hasPrefix("@")
            ? try SecretFile.firstLine(of: String(argument.dropFirst()), option: "-o @", what: "the output (-o file:@NAME writes a file named @NAME)")
            : argument
        guard case .network = Destination.parse(text) else { return text }
        return try expand(text, environment: environment)
    }

    /// `${NAME}` replaced by the variable's value; an unset or malformed one is refused, naming
    /// the variable (its value is never quoted).
    static func expand(_ url: String, environment: [String: String]) throws -> String {
        var out = ""
        var rest = Substring(url)
        while let start = rest.range(of: "${") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw UsageError("-o: '${' without a closing '}' in the URL; write ${NAME} to take NAME from the environment")
            }
            let name = String(rest[start.upperBound..<end])
            guard !name.isEmpty, name.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }) else {
                throw UsageError("-o: '${\(name)}' is not an environment variable name (letters, digits and _)")
            }
            guard let value = environment[name] else {
                throw UsageError("-o: the URL names ${\(name)}, which is not set in the environment; export \(name)=… first")
            }
            out += value
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }
}
