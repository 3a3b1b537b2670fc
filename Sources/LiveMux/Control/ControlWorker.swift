import POSIX

/// Runs the control API's requests off the HTTP loop, one at a time in the order they came: a
/// change may open a device (which can wait for its daemon for as long as `--device-timeout`),
/// create a file or start an encode, and the loop serves every viewer and the dashboard
/// meanwhile. The loop hands a request over and is woken when its answer is ready.
final class ControlWorker: Sendable {
    /// One request for `/api`, and the connection that waits for its answer.
    struct Request: Sendable {
        let token: UInt64
        let method: String
        let path: String
        let authorization: String
        let body: [UInt8]
    }

    private struct State {
        var pending: [Request] = []
        var answered: [(token: UInt64, answer: [UInt8])] = []
        var stopping = false
    }
    private let state = Locked(State())
    private let api: ControlAPI
    private let wake: @Sendable () -> Void
    private let thread = Locked<WorkerThread?>(nil)

    /// How long a request's connection waits for its answer (the longest change is a device's
    /// open, bounded by `--device-timeout`).
    static let answerTimeoutSeconds = 120.0

    /// - Parameter wake: called once an answer can be taken (`answers`).
    init(api: ControlAPI, wake: @escaping @Sendable () -> Void) {
        self.api = api
        self.wake = wake
    }

    /// Queues `request`. The thread starts with the first request, so a server that never
    /// answered one holds none.
    func submit(_ request: Request) {
        state.withLock { $0.pending.append(request) }
        state.broadcast()
        thread.withLock { t in
            guard t == nil else { return }
            t = WorkerThread.spawn("livemux-api") { [self] in run() }
        }
    }

    /// The answers made since the last call, by connection.
    func answers() -> [(token: UInt64, answer: [UInt8])] {
        state.withLock { s in
            defer { s.answered = [] }
            return s.answered
        }
    }

    /// Ends the thread once the request it is answering is done; the rest are not answered.
    func stop() {
        state.withLock { $0.stopping = true }
        state.broadcast()
        thread.withLock { $0 }?.join()
    }

    private func run() {
        while let request = state.withLock(waitingUntil: { !$0.pending.isEmpty || $0.stopping }, { s, _ -> Request? in
            s.stopping ? nil : s.pending.removeFirst()
        }) {
            let answer = api.answer(method: request.method, path: request.path, authorization: request.authorization, body: request.body)
            state.withLock { $0.answered.append((request.token, answer)) }
            wake()
        }
    }
}
