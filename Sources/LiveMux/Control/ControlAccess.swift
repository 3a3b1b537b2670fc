import Foundation

/// Who may change a running job (`--control-key-file`): every `/api` request carries
/// `Authorization: Bearer KEY`, compared in constant time. A viewer key never grants control.
public struct ControlAccess: Sendable {
    private let key: [UInt8]

    enum Verdict: Equatable { case allowed, missing, wrong }

    /// Keys shorter than this are refused: they can be guessed.
    public static let minimumKeyLength = 16

    /// nil when the key is too short.
    public init?(key: String) {
        guard key.utf8.count >= Self.minimumKeyLength else { return nil }
        self.key = Array(key.utf8)
    }

    /// The dashboard's page with the key in its fragment (`#control=KEY`), which shows the page's
    /// controls: a fragment is never sent, so the key stays out of request lines and access logs.
    /// For the person who runs the job; print it through `maskedURL`, which hides the key.
    public func pageURL(dashboard: String) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let value = String(decoding: key, as: UTF8.self).addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        return dashboard + "#control=" + value
    }

    /// What the `Authorization` header's value (empty when absent) says.
    func check(authorization: String) -> Verdict {
        let scheme = "bearer "
        guard authorization.count > scheme.count, authorization.prefix(scheme.count).lowercased() == scheme else {
            return authorization.isEmpty ? .missing : .wrong
        }
        let given = authorization.dropFirst(scheme.count).trimmingCharacters(in: [" ", "\t"])
        return ViewerAccess.equalInConstantTime(Array(given.utf8), key) ? .allowed : .wrong
    }
}
