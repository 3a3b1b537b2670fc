import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM: the first asks for a graceful stop, a second SIGINT or SIGTERM exits at
/// once with 130. SIGPIPE is ignored, so a closed stdout is an error we report, not a silent death.
final class SignalHandling: @unchecked Sendable {
    // Touched only on `queue`.
    private var sources: [DispatchSourceSignal] = []
    private var received = 0
    private let queue = DispatchQueue(label: "livemux-signals")

    static func ignoreBrokenPipe() { signal(SIGPIPE, SIG_IGN) }

    init(onFirst: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [unowned self, source] in
                // Signals that arrive together are delivered as one event; `data` counts them.
                let first = received == 0
                received += Int(source.data)
                if first { onFirst() }
                if received > 1 {
                    Terminal.error("interrupted again: exiting without finishing the outputs")
                    exit(130)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() { queue.sync { sources.forEach { $0.cancel() } } }
}

/// Writes diagnostics to stderr (stdout may carry media).
enum Terminal {
    static let stderrIsTerminal = isatty(2) != 0

    static func write(_ text: String) {
        var t = text
        t.withUTF8 { buf in _ = Glibc.write(2, buf.baseAddress, buf.count) }
    }

    static func error(_ message: String) { write("error: \(message)\n") }
    static func warning(_ message: String) { write("warning: \(message)\n") }
}
