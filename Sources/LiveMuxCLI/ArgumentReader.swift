/// Walks the arguments of one command: `--name value`, `--name=value`, flags, and `-` as a value.
struct ArgumentReader {
    private var rest: ArraySlice<String>

    init(_ arguments: [String]) { rest = arguments[...] }

    /// The next option name and its inline value (from `--name=value`), or nil at the end.
    mutating func nextOption() throws -> (name: String, inline: String?)? {
        guard let arg = rest.popFirst() else { return nil }
        guard arg.hasPrefix("-"), arg != "-" else {
            throw UsageError("unexpected argument '\(arg)' (options start with -; see --help)")
        }
        if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
            return (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
        }
        return (arg, nil)
    }

    /// The value of the option just read.
    mutating func value(for option: (name: String, inline: String?)) throws -> String {
        if let inline = option.inline { return inline }
        guard let v = rest.popFirst() else { throw UsageError("\(option.name) needs a value (see --help)") }
        return v
    }
}
