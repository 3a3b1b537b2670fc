/// How audio is encoded: codec, rate, channels, bit rate (`--acodec`, `--sample-rate`…).
public struct AudioSettings: Sendable, Equatable {
    public var codec: AudioCodec = .aac
    /// Nil keeps the source's own (the built-in tone's: `builtInSampleRate`), or the nearest
    /// rate AAC takes; another rate is resampled to.
    public var sampleRate: Int?
    /// Nil keeps the source's own: mono or stereo, more is mixed down to stereo (the built-in
    /// tone is stereo).
    public var channels: Int?
    public var bitRate = 128_000

    public init() {}

    static let builtInSampleRate = 48_000
    static let builtInChannels = 2

    /// The rates AAC's sampling-frequency table has (8 to 96 kHz).
    public static let aacSampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000]
}
