/// What a live device that fails mid-recording (a read error, its end, its daemon gone) gets: its
/// streams are filled (`DeviceFill`) while it is opened again with backoff; one warning names it.
/// Only when it stays away longer than `timeout` (`--device-timeout`) does the recording end.
struct DeviceReopening: Sendable {
    /// Seconds a device may stay away; 0 ends the recording at its first failure.
    var timeout: Double = 30
    /// Whether staying away past `timeout` ends the recording (the first source of each kind);
    /// if not, the device is left out with one warning and taken back when it returns.
    var endsRecording = true
    /// Waits between attempts: 0.25 s doubling up to 2 s, so a device that is back is picked up
    /// within about 2 s (attempts are bounded by `timeout`, not counted).
    var backoff = ReconnectPolicy(firstDelay: 0.25, maxDelay: 2, attempts: .max)
    /// Fills stay this far (µs) behind the clock: a reopened pulse stream stamps its first packets
    /// up to a buffer before they arrive, and real audio beats silence.
    var fillLag: Int64 = 200_000
    /// How often (µs) an absent device's streams are filled.
    var fillInterval: Int64 = 50_000
    /// A device that delivers nothing for this long (s) has failed though no read says so (its
    /// daemon stopped or hung): longer than any device's frame interval, and well inside what the
    /// mux queue holds of the other stream meanwhile (256 packets: 8 s of 30 fps video).
    var stallTimeout: Double = 2
    /// The same from an opening to its first packet: a camera may take a second to start.
    var startTimeout: Double = 5
    init(timeout: Double = 30) { self.timeout = timeout }

    /// A source after the first of its kind, given or added live: staying away never ends the recording.
    static func later(timeout: Double) -> DeviceReopening {
        var policy = DeviceReopening(timeout: timeout)
        policy.endsRecording = false
        return policy
    }
}
