import Foundation
import XCTest

/// Live devices without hardware, private to one test: an Xvfb screen on a free display, a
/// PulseAudio daemon of its own (runtime dir, socket, explicit modules: a null sink whose monitor
/// is a source, and a pipe source that is the "microphone"), and the truth source
/// (Tests/TruthSource/truth-source.c, built here with gcc) that beeps into the pipe and flashes
/// the screen at the same monotonic instants, and on demand a tone played into the null sink
/// (`playTone`). `stop()` ends every process it started.
/// On demand a second microphone, `rig_mic2`, in the same daemon or in a second one of its own
/// (so that it can fail alone), into which the truth source writes a second beep train.
final class DeviceRig {
    /// Where the second microphone is.
    enum SecondMicrophone { case none, sameDaemon, ownDaemon }
    let dir: String
    /// The X display, such as ":3".
    private(set) var display = ""
    /// The pipe source's name: `pulse:rig_mic`; the null sink's monitor is `rig_sink.monitor`.
    static let microphone = "rig_mic", sink = "rig_sink", sinkMonitor = "rig_sink.monitor"
    /// The second microphone's pipe source: `pulse:rig_mic2`.
    static let secondMicrophone = "rig_mic2"
    /// The second train (truth-source.c): its pitch (Hz), how long (s) after each flash its beep
    /// starts, and its level (dBFS; the first train's is `beepDBFS`).
    static let secondBeepHz = 2500, secondBeepOffset = 0.25, secondBeepDBFS = -12.2
    static let beepHz = 1000, beepDBFS = -6.2
    /// The rate the pipe source is labelled with (the truth source may feed another).
    static let labelledRate = 48000
    /// The screen: small, so encoding costs little on a shared machine.
    static let screenSize = "320x240"
    /// The truth source's beep and flash period (s): see truth-source.c.
    static let truthPeriod = 1.020601133

    private var xvfb: ChildProcess?
    private var secondXvfb: ChildProcess?
    /// The second screen's display (`startSecondScreen`).
    private(set) var secondDisplay = ""
    private var pulse: ChildProcess?
    private var truth: ChildProcess?
    private var truthOutput: PipeReader?
    private var tone: ChildProcess?
    let second: SecondMicrophone
    private var secondPulse: ChildProcess?

    var pipePath: String { "\(dir)/mic.fifo" }
    var socketPath: String { "\(dir)/pulse.socket" }
    var secondPipePath: String { "\(dir)/mic2.fifo" }
    /// The second daemon's socket (`.ownDaemon`): give livemux `--audio-opt server=unix:…`.
    var secondSocketPath: String { "\(dir)/pulse2.socket" }
    /// What livemux (and pactl, ffmpeg) need to find the rig's display and daemon. The ALSA
    /// `pulse` device (libasound2-plugins) follows PULSE_SERVER too and records the default
    /// source, the pipe.
    var environment: [String: String] {
        ["DISPLAY": display, "PULSE_SERVER": "unix:\(socketPath)", "XDG_RUNTIME_DIR": "\(dir)/runtime", "HOME": dir]
    }

    init(second: SecondMicrophone = .none) throws {
        self.second = second
        dir = try Tools.temporaryDirectory()
        for runtime in ["runtime", "runtime2"] {
            try FileManager.default.createDirectory(atPath: "\(dir)/\(runtime)", withIntermediateDirectories: true)
        }
        do {
            try startScreen()
            try startPulse()
            if second == .ownDaemon { try startSecondPulse() }
        } catch {
            stop()
            throw error
        }
    }

    /// Xvfb picks a free display itself and writes its number to the pipe it is given. As root it
    /// runs at real-time priority like the truth source, whose every flash waits for Xvfb to draw
    /// it (up to 37 ms late on the loaded machine otherwise); it draws a 320x240 screen, little work.
    private func startScreen() throws {
        (xvfb, display) = try Self.launchScreen()
    }

    /// Another X server on a free display whose screen is all white (`-wr`): a second video
    /// source ("the camera") that `killSecondScreen` can end alone.
    func startSecondScreen() throws {
        (secondXvfb, secondDisplay) = try Self.launchScreen(["-wr"])
    }

    func killSecondScreen() {
        secondXvfb?.end()
        secondXvfb = nil
    }

    private static func launchScreen(_ options: [String] = []) throws -> (ChildProcess, String) {
        let xvfb = ["/usr/bin/Xvfb", "-displayfd", "1", "-screen", "0", "\(Self.screenSize)x24", "-nolisten", "tcp"] + options
        let command = getuid() == 0 ? ["/usr/bin/chrt", "-f", "5"] + xvfb : xvfb
        let process = try ChildProcess(command[0], Array(command.dropFirst()), stdout: .pipe)
        let number = String(decoding: process.stdout!.availableData, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !number.isEmpty, Int(number) != nil else {
            process.end()
            throw SetupError("Xvfb did not start (no display number)")
        }
        return (process, ":\(number)")
    }

    /// Starts the daemon (again, after `killPulse`) and waits until its socket and pipe exist.
    func startPulse() throws {
        var modules = [
            "load-module module-null-sink sink_name=rig_sink",
            Self.pipeSource(Self.microphone, pipePath),
            "set-default-source \(Self.microphone)"]
        var pipes = [pipePath]
        if second == .sameDaemon {
            modules.insert(Self.pipeSource(Self.secondMicrophone, secondPipePath), at: 2)
            pipes.append(secondPipePath)
        }
        pulse = try launchPulse(name: "pulse", socket: socketPath, modules: modules, pipes: pipes, environment: environment)
    }

    /// Starts the second daemon (`.ownDaemon`; again, after `killSecondPulse`), whose only source
    /// is the second microphone.
    func startSecondPulse() throws {
        let environment = ["PULSE_SERVER": "unix:\(secondSocketPath)", "XDG_RUNTIME_DIR": "\(dir)/runtime2", "HOME": dir]
        secondPulse = try launchPulse(name: "pulse2", socket: secondSocketPath,
                                      modules: [Self.pipeSource(Self.secondMicrophone, secondPipePath)],
                                      pipes: [secondPipePath], environment: environment)
    }

    private static func pipeSource(_ name: String, _ pipe: String) -> String {
        "load-module module-pipe-source source_name=\(name) file=\(pipe) format=s32le rate=\(labelledRate) channels=1"
    }

    /// Starts a daemon listening on `socket` with `modules` (its script, log and runtime named
    /// after `name`) and waits until its socket and `pipes` exist.
    private func launchPulse(name: String, socket: String, modules: [String], pipes: [String],
                             environment: [String: String]) throws -> ChildProcess {
        // A daemon that was killed leaves its pipe behind, and module-pipe-source refuses one
        // that exists.
        for file in pipes + [socket] { try? FileManager.default.removeItem(atPath: file) }
        let script = (["load-module module-native-protocol-unix socket=\(socket) auth-anonymous=1"] + modules).joined(separator: "\n")
        try script.write(toFile: "\(dir)/\(name).pa", atomically: true, encoding: .utf8)
        // As root it must be told not to exit, not to take real-time priority on a shared machine,
        // and not to kill itself when a loaded machine makes it look busy.
        let process = try ChildProcess("/usr/bin/pulseaudio", [
            "-n", "--daemonize=no", "--exit-idle-time=-1", "--realtime=no", "--high-priority=no",
            "--no-cpu-limit", "--use-pid-file=no", "--log-target=file:\(dir)/\(name).log", "-F", "\(dir)/\(name).pa"],
            environment: environment)
        // The daemon creates its socket and the pipes once its modules are loaded: only files are
        // looked at, no client that could wait on a half-started daemon, and with a deadline.
        let started = waitUntil(deadline: Self.startTimeout) {
            (pipes + [socket]).allSatisfy { FileManager.default.fileExists(atPath: $0) } || !process.isRunning
        }
        if started && process.isRunning { return process }
        let log = (try? String(contentsOfFile: "\(dir)/\(name).log", encoding: .utf8)) ?? ""
        process.end()
        throw SetupError("the private PulseAudio daemon did not start within \(Self.startTimeout) s: \(log.suffix(800))")
    }

    /// How long a daemon may take to start on a loaded machine.
    static let startTimeout = 15.0

    /// Ends the X server (SIGTERM, so it removes its lock and socket): x11grab's reads fail.
    func killScreen() {
        xvfb?.end()
        xvfb = nil
    }

    /// Starts the X server again on the same display; ready when its socket exists.
    func restartScreen() throws {
        xvfb = try Self.relaunchScreen(display)
    }

    /// Starts the second screen again (white, on its display).
    func restartSecondScreen() throws {
        secondXvfb = try Self.relaunchScreen(secondDisplay, ["-wr"])
    }

    private static func relaunchScreen(_ display: String, _ options: [String] = []) throws -> ChildProcess {
        let xvfb = ["/usr/bin/Xvfb", display, "-screen", "0", "\(Self.screenSize)x24", "-nolisten", "tcp"] + options
        let command = getuid() == 0 ? ["/usr/bin/chrt", "-f", "5"] + xvfb : xvfb
        let process = try ChildProcess(command[0], Array(command.dropFirst()))
        let socket = "/tmp/.X11-unix/X\(display.dropFirst())"
        let started = waitUntil(deadline: Self.startTimeout) { FileManager.default.fileExists(atPath: socket) || !process.isRunning }
        if started && process.isRunning { return process }
        process.end()
        throw SetupError("Xvfb did not start again on \(display)")
    }

    /// Kills the daemon as a crash would (SIGKILL): its clients see the connection drop.
    func killPulse() {
        pulse?.end(signal: SIGKILL)
    }

    /// Kills the second daemon (`.ownDaemon`) as a crash would: only the second microphone fails.
    func killSecondPulse() {
        secondPulse?.end(signal: SIGKILL)
    }

    /// Stops the daemon where it is (SIGSTOP), as a hung one would: its clients' connections stay
    /// open and nothing arrives on them. `resumePulse` lets it go on.
    func pausePulse() {
        pulse?.signal(SIGSTOP)
    }

    func resumePulse() {
        pulse?.signal(SIGCONT)
    }

    /// The truth source, built once per test run.
    private static let truthBinary = Result { try compile("Tests/TruthSource/truth-source.c", to: "truth-source", ["-pthread"], libraries: ["-lX11", "-lm"]) }

    /// Tests/DeviceShims/pulse-latency-unknown.c, built once per test run: preloaded into livemux,
    /// it fails pulse's first latency query.
    static func latencyUnknownShim() throws -> String { try latencyUnknownBinary.get() }
    private static let latencyUnknownBinary = Result {
        try compile("Tests/DeviceShims/pulse-latency-unknown.c", to: "pulse-latency-unknown.so", ["-shared", "-fPIC"], libraries: ["-ldl"])
    }

    /// Builds `source` (from the package root) with gcc into a temporary directory; the path built.
    private static func compile(_ source: String, to name: String, _ flags: [String], libraries: [String]) throws -> String {
        let output = "\(try Tools.temporaryDirectory())/\(name)"
        let path = Tools.packageRoot.appendingPathComponent(source).path
        let r = try Tools.run("gcc", ["-O2", "-Wall"] + flags + ["-o", output, path] + libraries)
        guard r.status == 0 else { throw SetupError("cannot build \(source): \(r.stderr)") }
        return output
    }

    /// Starts beeping and flashing for `seconds`, feeding the pipe `rate` samples per second of the
    /// monotonic clock (the source is labelled 48 kHz whatever it is fed), and the second
    /// microphone's pipe its train when the rig has one.
    func startTruth(seconds: Double, rate: Double = Double(labelledRate)) throws {
        let arguments = [pipePath, display, String(seconds), String(rate)] + (second == .none ? [] : [secondPipePath])
        let process = try ChildProcess(try Self.truthBinary.get(), arguments, stdout: .pipe)
        truth = process
        truthOutput = PipeReader(process.stdout)
    }

    /// The frequency (Hz) of `playTone`.
    static let toneFrequency = 1000

    /// Plays a tone into the null sink for `seconds` (a WAV made by ffmpeg, played by paplay), so
    /// its monitor, `rig_sink.monitor`, carries a signal.
    func playTone(seconds: Double) throws {
        let wav = "\(dir)/tone.wav"
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                                            "sine=frequency=\(Self.toneFrequency):sample_rate=\(Self.labelledRate):duration=\(seconds)",
                                            "-ac", "2", wav])
        guard made.status == 0 else { throw SetupError("cannot make the tone: \(made.stderr)") }
        tone = try ChildProcess("paplay", ["-d", Self.sink, wav], environment: environment)
    }

    /// What the truth source printed (truth-source.c).
    struct TruthReport {
        /// Its start on the monotonic clock (ms): flash k (k ≥ 1) is at start + k periods.
        var start: Double?
        struct Flash {
            /// How late (ms) the samples holding the beep's onset were written.
            var beepLate: Double
            /// When each of the flash's draws (white, then a step down every 1/8 frame) was done,
            /// ms after the flash instant.
            var drawn: [Double]
        }
        /// Per flash k (index k − 1).
        var flashes: [Flash] = []
        /// Per flash k (index k − 1), how late (ms) the samples holding the second train's beep
        /// onset were written (a rig with a second microphone).
        var secondBeepsLate: [Double] = []
        /// The worst lateness of anything it did (ms).
        var late: Double?
    }

    /// Waits for the truth source to end and returns what it printed.
    func finishTruth() -> TruthReport {
        var report = TruthReport()
        guard let truth, let truthOutput else { return report }
        truth.signal(SIGTERM)
        truth.wait()
        self.truth = nil
        for line in String(decoding: truthOutput.finish(), as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ").map(String.init)
            switch (parts.first, parts.count) {
            case ("start", 3): report.start = Double(parts[1]).map { $0 / 1000 }
            case ("late", 2): report.late = Double(parts[1]).map { $0 / 1000 }
            case ("flash", let n) where n > 3:
                let values = parts.dropFirst(2).map { (Double($0) ?? .infinity) / 1000 }
                report.flashes.append(.init(beepLate: values[0], drawn: Array(values.dropFirst())))
            case ("beep2", 3): report.secondBeepsLate.append((Double(parts[2]) ?? .infinity) / 1000)
            default: break
            }
        }
        return report
    }

    /// Stops every process the rig started and removes its directory.
    func stop() {
        for process in [truth, tone, xvfb, secondXvfb].compactMap({ $0 }) { process.end() }
        resumePulse()  // a paused daemon would take the SIGTERM only once it runs again
        pulse?.end()
        secondPulse?.end()
        secondPulse = nil
        truth = nil
        tone = nil
        pulse = nil
        xvfb = nil
        secondXvfb = nil
        try? FileManager.default.removeItem(atPath: dir)
    }
}
