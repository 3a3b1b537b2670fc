import Foundation

/// A child started with `posix_spawn` and reaped by `waitpid` here, not by Foundation's `Process`.
///
/// PulseAudio closes every inherited descriptor at startup; Foundation's `Process` takes the close
/// of its private socket for the child's exit and blocks its one monitor thread in `wait4` on the
/// live daemon, after which no other child (gcc, ffmpeg) is reaped and the test hangs.
final class SpawnedProcess {
    let pid: pid_t
    private var exited = false

    /// Starts `program` with stdin, stdout and stderr on /dev/null.
    init(_ program: String, _ arguments: [String], environment: [String: String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let env = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { "\($0.key)=\($0.value)" }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, program, &actions, nil, argv, envp)
        guard status == 0 else { throw RigError("cannot start \(program): \(String(cString: strerror(status)))") }
        pid = child
    }

    /// Whether the child is still running (reaps it if it has exited).
    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    /// Sends `signal` and waits up to `seconds` for the exit; then SIGKILL. Always reaped.
    func end(signal: Int32 = SIGTERM, seconds: Double = 1) {
        guard isRunning else { return }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { usleep(10_000) }
        if isRunning { kill(pid, SIGKILL) }
        var status: Int32 = 0
        if !exited { _ = waitpid(pid, &status, 0) }
        exited = true
    }
}
