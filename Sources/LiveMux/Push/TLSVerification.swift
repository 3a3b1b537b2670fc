import Foundation
import FFmpeg

/// How TLS-based outputs (`rtmps://`, `tls://`, `https://`) check the server before anything is
/// sent: its certificate chain against trusted CAs and the URL's host name, on by default.
/// FFmpeg's tls protocol leaves `tls_verify` off; rtmp and http hand their options dictionary
/// down to it, so the options here reach the TLS layer under `rtmps://` too.
public struct TLSVerification: Sendable, Equatable {
    /// Debian's bundle of the system's trusted CAs (package ca-certificates).
    static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"

    /// The PEM file of the CAs trusted (`--tls-ca-file`); it replaces the system's, not adds to it.
    public var caFile = systemCAFile
    /// Skips the check (`--tls-insecure`): whoever answers at the address gets the stream.
    public var insecure = false

    public init() {}

    /// Schemes that run over FFmpeg's tls protocol with the options given to them.
    static let verifiedSchemes: Set<String> = ["rtmps", "tls", "https"]
    /// rtmpts tunnels through an https connection FFmpeg 5.1 opens without options
    /// (libavformat/rtmphttp.c), so its certificate can never be checked.
    static let uncheckableSchemes: Set<String> = ["rtmpts"]

    private static func scheme(of url: String) -> String {
        url.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
    }

    /// Whether the URL's connection is TLS that this policy checks.
    func verifies(_ url: String) -> Bool { !insecure && Self.verifiedSchemes.contains(Self.scheme(of: url)) }

    /// The tls protocol's options for the URL (none for schemes without TLS). The host name checked
    /// is the URL's own: FFmpeg's tls sets `verifyhost` to it when not given.
    func protocolOptions(for url: String) -> [(String, String)] {
        guard Self.verifiedSchemes.contains(Self.scheme(of: url)) else { return [] }
        return insecure ? [("tls_verify", "0")] : [("tls_verify", "1"), ("ca_file", caFile)]
    }

    /// Why the URL cannot be pushed under this policy, if it cannot.
    public func problem(for url: String) -> String? {
        let scheme = Self.scheme(of: url)
        if Self.uncheckableSchemes.contains(scheme), !insecure {
            return "\(maskedURL(url)): FFmpeg cannot check the certificate of an \(scheme):// server; use rtmps:// (or --tls-insecure to push unchecked)"
        }
        if verifies(url), !FileManager.default.isReadableFile(atPath: caFile) {
            return "\(maskedURL(url)) needs trusted CAs to check the server, and \(caFile) cannot be read; install ca-certificates or give --tls-ca-file FILE"
        }
        return nil
    }

    /// One line on why the server was refused, and what to do about it.
    func explain(_ failure: TLSVerificationFailure) -> String {
        switch failure.reason {
        case .untrusted:
            return "the server's certificate is not trusted: no CA in \(caFile) signed it, or it is expired, not yet valid or revoked"
                + " (FFmpeg does not say which); give the CA that signed it with --tls-ca-file FILE, or --tls-insecure to skip the check"
        case .hostName(let host):
            return "the server's certificate does not name \(host); connect with a host name it lists, or --tls-insecure to skip the check"
        case .unverifiable(let why):
            return "the server's certificate could not be checked (\(why)); --tls-insecure skips the check"
        }
    }
}
