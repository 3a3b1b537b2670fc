import Foundation
import LiveMux

/// `livemux devices [--json]`: the capture devices a user can pick (`DeviceCatalog`).
struct DevicesCommand {
    var json = false

    static let help = """
    USAGE: livemux devices [--json]

    Lists the capture devices found: PulseAudio sources and sinks' monitors, ALSA capture
    devices, X displays (x11grab) and cameras (v4l2), each as the source to give
    (--audio pulse:NAME, --video x11grab::0…).

      --json                one JSON object: per backend, its sources (name, description,
                            default) and why none could be listed (problem)
      -h, --help            this help
    """

    static func parse(_ arguments: [String]) throws -> DevicesCommand {
        var cmd = DevicesCommand()
        for arg in arguments {
            switch arg {
            case "--json": cmd.json = true
            default: throw UsageError("unknown option '\(arg)' for devices (see livemux devices --help)")
            }
        }
        return cmd
    }

    func run() {
        let backends = DeviceCatalog.list()
        if json {
            let object = Dictionary(uniqueKeysWithValues: backends.map { b -> (String, Any) in
                var entry: [String: Any] = ["sources": b.sources.map { ["name": $0.name, "description": $0.description, "default": $0.isDefault] }]
                if let problem = b.problem { entry["problem"] = problem }
                return (b.format, entry)
            })
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            print(String(decoding: data, as: UTF8.self))
            return
        }
        for b in backends {
            print("\(b.format) (\(b.option) \(b.format):NAME)")
            if b.sources.isEmpty { print("  none found" + (b.problem.map { ": \($0)" } ?? "")) }
            let width = b.sources.map(\.name.count).max() ?? 0
            for s in b.sources {
                print("  " + s.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + s.description + (s.isDefault ? " (default)" : ""))
            }
        }
    }
}
