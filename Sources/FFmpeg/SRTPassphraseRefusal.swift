/// An SRT peer refused the connection for its passphrase: a wrong one, one where the peer has
/// none, or none where it has one. Trying again meets the same refusal, so callers give up.
/// Told from other failures by libsrt's log (`SRTLog`), since FFmpeg 5.1 returns a bare EIO.
public struct SRTPassphraseRefusal: Error, Equatable, Sendable {
    public init() {}
}
