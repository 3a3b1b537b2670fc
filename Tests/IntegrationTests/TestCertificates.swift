import Foundation
import XCTest

/// A private CA made with openssl in a test's directory, and server certificates it signs: what a
/// server on a private network presents, and no system trusts.
struct TestCertificates {
    let directory: String
    /// The CA's certificate (PEM): what `--tls-ca-file` is given.
    var caFile: String { directory + "/ca.pem" }
    private var caKey: String { directory + "/ca.key" }

    /// Makes the CA (a 2048-bit RSA key, valid for a day).
    init(directory: String) throws {
        self.directory = directory
        try Self.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey, "-out", caFile,
                          "-days", "1", "-subj", "/CN=LiveMux Test CA"])
    }

    /// A server certificate and key signed by the CA for `names` (subjectAltName entries such as
    /// `DNS:localhost`, `IP:127.0.0.1`), named `name.pem` and `name.key`, valid for `days` (-1:
    /// expired a day before it was made).
    func server(_ name: String, commonName: String, names: [String], days: Int = 1) throws -> (certificate: String, key: String) {
        let base = "\(directory)/\(name)"
        try Self.openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", base + ".key", "-out", base + ".csr",
                          "-subj", "/CN=\(commonName)"])
        try "subjectAltName=\(names.joined(separator: ","))\n".write(toFile: base + ".ext", atomically: true, encoding: .utf8)
        try Self.openssl(["x509", "-req", "-in", base + ".csr", "-CA", caFile, "-CAkey", caKey, "-CAcreateserial",
                          "-out", base + ".pem", "-days", String(days), "-extfile", base + ".ext"])
        return (base + ".pem", base + ".key")
    }

    private static func openssl(_ arguments: [String]) throws {
        let r = try Tools.run("openssl", arguments)
        guard r.status == 0 else { throw SetupError("openssl \(arguments.joined(separator: " ")): \(r.stderr)") }
    }
}
