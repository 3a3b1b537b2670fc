/// A TLS server whose certificate FFmpeg's tls protocol (GnuTLS, `tls_verify=1`) refused. It is
/// not a network hiccup: trying again meets the same certificate, so callers give up at once.
///
/// FFmpeg 5.1 returns a bare EIO and says why only in its log (libavformat/tls_gnutls.c), so the
/// reason is read from the error lines the open logged. GnuTLS's status bits (unknown issuer,
/// expired, revoked…) are not in those lines: "not trusted" is as precise as FFmpeg lets it be.
public struct TLSVerificationFailure: Error, Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        /// The chain does not lead to a trusted CA, or a certificate in it is expired, not yet
        /// valid or revoked ("Peer certificate failed verification").
        case untrusted
        /// The certificate names neither the host nor its address ("does not match hostname H").
        case hostName(String)
        /// GnuTLS could not check the certificate at all (its own message).
        case unverifiable(String)
    }
    public let reason: Reason

    public init(reason: Reason) { self.reason = reason }

    /// The failure the error lines of a failed open describe, or nil when they describe none.
    public init?(logLines: [String]) {
        for line in logLines {
            let text = Self.withoutPrefix(line)
            if text.hasPrefix(Self.untrustedLine) { self.init(reason: .untrusted); return }
            if text.hasPrefix(Self.hostNameLine) {
                self.init(reason: .hostName(String(text.dropFirst(Self.hostNameLine.count)))); return
            }
            if text.hasPrefix(Self.unverifiableLine) {
                self.init(reason: .unverifiable(String(text.dropFirst(Self.unverifiableLine.count)))); return
            }
        }
        return nil
    }

    // tls_gnutls.c's messages after the handshake, when tls_verify is set.
    private static let untrustedLine = "Peer certificate failed verification"
    private static let hostNameLine = "The certificate's owner does not match hostname "
    private static let unverifiableLine = "Unable to verify peer certificate: "

    /// The line without av_log's "[tls @ 0x…] " prefix.
    private static func withoutPrefix(_ line: String) -> Substring {
        guard line.hasPrefix("["), let end = line.firstIndex(of: "]") else { return line[...] }
        return line[line.index(after: end)...].drop { $0 == " " }
    }
}
