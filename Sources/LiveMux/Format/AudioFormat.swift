/// The sample rate and channel count a recording's audio is encoded at: what the options ask
/// for, else what the source delivers (see `resolve`).
struct AudioFormat: Sendable, Equatable {
    var sampleRate: Int
    var channels: Int

    /// The options where given, else the source's own format, made one AAC can take: a rate
    /// that is not in AAC's table is resampled to the nearest one that is, and more than two
    /// channels are mixed down to stereo, each with a note. A source that gives neither gets the
    /// built-in tone's.
    static func resolve(_ settings: AudioSettings, source: SourceFormat, report: (String) -> Void) -> AudioFormat {
        var rate = AudioSettings.builtInSampleRate
        if let given = settings.sampleRate {
            rate = given
        } else if source.sampleRate > 0 {
            rate = AudioSettings.aacSampleRates.min { abs($0 - source.sampleRate) < abs($1 - source.sampleRate) }!
            if rate != source.sampleRate {
                report("AAC cannot take the source's \(source.sampleRate) Hz: resampling to \(rate) Hz, the nearest rate it takes (or give --sample-rate)")
            }
        } else {
            report("the source does not say its sample rate: encoding \(rate) Hz (give --sample-rate to choose)")
        }
        var channels = AudioSettings.builtInChannels
        if let given = settings.channels {
            channels = given
        } else if (1...2).contains(source.channels) {
            channels = source.channels
        } else if source.channels > 2 {
            report("the source has \(source.channels) channels: mixing them down to stereo (or give --channels 1)")
        } else {
            report("the source does not say its channel count: encoding stereo (give --channels to choose)")
        }
        return AudioFormat(sampleRate: rate, channels: channels)
    }
}
