import Foundation

/// A program the tests run: started with `posix_spawn` and reaped by `waitpid` here. The one way
/// the tests start programs: to its end with a timeout (`Tools.run`), or in the background, then
/// waited for or ended.
///
/// Not Foundation's `Process`: PulseAudio closes every inherited descriptor at startup; `Process`
/// takes the close of its private socket for the child's exit and blocks its one monitor thread
/// in `wait4` on the live daemon, after which no other child is reaped and the test hangs.
/// As `Process` does, the child gets a process group of its own and no descriptor of this process
/// but its stdin, stdout and stderr.
final class ChildProcess: @unchecked Sendable {
    /// Where the child's stdout or stderr goes.
    enum Output {
        case null
        /// A pipe whose read end is `stdout` or `stderr` here.
        case pipe
        /// A file, created or emptied first.
        case file(String)
    }

    let pid: pid_t
    /// The status of a child something else reaped (no wait of this process can tell it).
    static let reapedElsewhere: Int32 = -1
    /// The read ends of the pipes asked for (`.pipe`); nil otherwise.
    let stdout: FileHandle?
    let stderr: FileHandle?
    /// The files asked for (`.file`).
    let stdoutPath: String?
    let stderrPath: String?
    private let lock = NSLock()
    private var exitStatus: Int32?  // guarded by `lock`

    /// Starts `program` (a name alone is looked for in /usr/bin) with this process's environment
    /// and `environment` over it; stdin is the file `stdin`, else /dev/null.
    init(_ program: String, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
         stdout: Output = .null, stderr: Output = .null) throws {
        let path = program.hasPrefix("/") ? program : "/usr/bin/\(program)"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        var readEnds: [Int32: Int32] = [:]  // child's descriptor → read end here
        var writeEnds: [Int32] = []
        for (fd, output) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch output {
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case .file(let file): posix_spawn_file_actions_addopen(&actions, fd, file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw SetupError("pipe: \(String(cString: strerror(errno)))") }
                // Not inherited by children other threads start meanwhile.
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                posix_spawn_file_actions_adddup2(&actions, ends[1], fd)
                readEnds[fd] = ends[0]
                writeEnds.append(ends[1])
            }
        }
        // Every other descriptor of this process is closed in the child (what was open a moment
        // ago: one closed since is ignored by glibc's close action).
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for fd in open where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let env = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { "\($0.key)=\($0.value)" }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        writeEnds.forEach { close($0) }
        guard status == 0 else {
            readEnds.values.forEach { close($0) }
            throw SetupError("cannot start \(path): \(String(cString: strerror(status)))")
        }
        pid = child
        self.stdout = readEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.stderr = readEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        if case .file(let file) = stdout { stdoutPath = file } else { stdoutPath = nil }
        if case .file(let file) = stderr { stderrPath = file } else { stderrPath = nil }
    }

    /// Starts `program` beside the test with its stdout and stderr in `directory/name.out` and `.err`.
    static func background(_ program: String, _ arguments: [String], directory: String, name: String,
                           environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(program, arguments, environment: environment,
                         stdout: .file("\(directory)/\(name).out"), stderr: .file("\(directory)/\(name).err"))
    }

    /// What the child wrote to its stdout or stderr file so far.
    var stdoutFile: Data { stdoutPath.flatMap { FileManager.default.contents(atPath: $0) } ?? Data() }
    var stderrFile: String { stderrPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }

    /// The exit status once it has exited (the signal's number if a signal ended it, as
    /// Foundation's `Process` says it); nil while it runs. Reaps it.
    var status: Int32? {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus == nil {
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid {
                let signal = raw & 0x7f
                exitStatus = signal == 0 ? (raw >> 8) & 0xff : signal
            } else if reaped == -1 && errno == ECHILD {
                exitStatus = Self.reapedElsewhere
            }
        }
        return exitStatus
    }

    var isRunning: Bool { status == nil }

    /// Waits up to `timeout` seconds for the exit; the exit status, nil if it still runs.
    @discardableResult
    func wait(timeout: Double = .infinity) -> Int32? {
        let deadline = Date().addingTimeInterval(min(timeout, 1e9))
        while true {
            if let status { return status }
            if Date() >= deadline { return nil }
            usleep(10_000)  // this wait's own poll (waitUntil would stretch `timeout` under a sanitizer)
        }
    }

    /// Sends `signal` unless it has exited.
    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Sends `signal`, waits up to `grace` seconds for the exit, then SIGKILL; always reaped. The
    /// exit status.
    @discardableResult
    func end(signal: Int32 = SIGTERM, grace: Double = 1) -> Int32 {
        self.signal(signal)
        if let status = wait(timeout: grace) { return status }
        kill(pid, SIGKILL)
        return wait()!
    }

    /// Waits up to `seconds` for the exit, then kills it; the exit status.
    @discardableResult
    func finish(within seconds: Double) -> Int32 {
        wait(timeout: seconds) ?? end(signal: SIGKILL)
    }
}
