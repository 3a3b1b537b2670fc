import CFFmpeg

/// HMAC-SHA256 (RFC 2104) by libavutil's `av_hmac`: signs viewer links, so a link with an
/// expiry cannot be made or changed without the key.
public enum HMACSHA256 {
    static let digestBytes = 32

    /// The 32-byte HMAC of `message` under `key`.
    public static func digest(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        guard let context = av_hmac_alloc(AV_HMAC_SHA256) else { throw FFmpegError(code: FFmpegError.posix(ENOMEM), function: "av_hmac_alloc") }
        defer { av_hmac_free(context) }
        var out = [UInt8](repeating: 0, count: digestBytes)
        let written = av_hmac_calc(context, message, UInt32(message.count), key, UInt32(key.count), &out, UInt32(digestBytes))
        precondition(written == Int32(digestBytes), "av_hmac_calc wrote \(written) bytes of SHA-256's \(digestBytes)")
        return out
    }
}
