import CFFmpeg
import POSIX
import Synchronization

/// A connection to a URL that libavformat's protocols can write (`rtmp://`, `srt://`, `tcp://`,
/// `udp://`), opened with `avio_open2`. The RTMP protocol takes FLV bytes — file header, then
/// tags — and turns each tag into RTMP messages, so the FLV muxer's chunks can be written as they are.
///
/// Used by one writer thread only, except `interrupt()`, which any thread may call to make a
/// blocking open or write give up (libavformat polls the interrupt callback while it waits).
public final class NetworkOutput: @unchecked Sendable {
    private var context: UnsafeMutablePointer<AVIOContext>?
    private let interruption: Interruption
    /// The connection's TCP socket, when the protocol runs over TCP and it could be told apart
    /// (see `TCPSocket`): what the kernel still holds is read from it.
    public let socket: TCPSocket?

    /// A flag libavformat polls while it waits. The caller keeps it, so it can interrupt a
    /// connection attempt before `init` has returned.
    public final class Interruption: Sendable {
        let requested = Atomic<Bool>(false)
        public init() {}
        /// Makes a blocking open, write or close return with an error: from any thread.
        public func interrupt() { requested.store(true, ordering: .relaxed) }
        public var isRequested: Bool { requested.load(ordering: .relaxed) }
    }

    /// Connects. `options` are the protocol's private options (`rw_timeout`, `timeout`,
    /// `tls_verify`, …). `displayName` replaces the URL in errors, so secrets in it never reach a
    /// message. Throws `TLSVerificationFailure` when a TLS server's certificate was refused, and
    /// `SRTPassphraseRefusal` when an SRT peer refused the passphrase.
    public init(url: String, displayName: String, options: [(String, String)] = [],
                interruption: Interruption = Interruption()) throws {
        self.interruption = interruption
        var callback = AVIOInterruptCB()
        callback.callback = { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<Interruption>.fromOpaque(opaque).takeUnretainedValue().requested.load(ordering: .relaxed) ? 1 : 0
        }
        callback.opaque = Unmanaged.passUnretained(interruption).toOpaque()
        // Not every protocol takes every option given (rw_timeout, send_buffer_size…): what is
        // left over is not an error here.
        var dict = try OptionDictionary(options)
        var pb: UnsafeMutablePointer<AVIOContext>? = nil
        let port = Self.tcpPort(of: url)
        let before = port == nil ? [:] : TCPSocket.openSockets()
        let isSRT = url.lowercased().hasPrefix("srt:")
        if isSRT { SRTLog.route() }
        let rejectionsBefore = SRTLog.passphraseRejections
        let (code, errors) = FFmpegLog.watchingErrors { avio_open2(&pb, url, AVIO_FLAG_WRITE, &callback, &dict.raw) }
        if code < 0, let refused = TLSVerificationFailure(logLines: errors) { throw refused }
        // libsrt logs the refusal on its own thread; one during this open is this connection's
        // (or, rarely, another SRT output's failing at the same moment for the same reason).
        if code < 0, isSRT, SRTLog.passphraseRejections > rejectionsBefore { throw SRTPassphraseRefusal() }
        try check(code, "avio_open2(\(displayName))")
        context = pb
        socket = port.flatMap { TCPSocket.connected(since: before, peerPort: $0) }
    }

    /// Default ports of the TCP-based schemes whose URL may leave the port out.
    static let defaultPorts = ["rtmp": 1935, "rtmpe": 1935, "rtmps": 443, "tcp": -1]

    /// The TCP port a URL connects to, for schemes that run over one TCP connection; nil otherwise.
    static func tcpPort(of url: String) -> Int? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon].lowercased()
        guard let fallback = defaultPorts[scheme] else { return nil }
        var rest = url[colon...].dropFirst()
        guard rest.hasPrefix("//") else { return nil }
        rest = rest.dropFirst(2)
        var authority = rest.prefix { $0 != "/" && $0 != "?" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        // [IPv6]:port or host:port
        let hostEnd = authority.hasPrefix("[") ? authority.firstIndex(of: "]") : authority.startIndex
        guard let hostEnd else { return nil }
        if let c = authority[hostEnd...].lastIndex(of: ":"), let port = Int(authority[authority.index(after: c)...]) { return port }
        return fallback > 0 ? fallback : nil
    }

    deinit {
        if context != nil { avio_closep(&context) }
    }

    /// Writes all of `bytes` and flushes them to the protocol, so a live stream leaves at once.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let pb = context else { throw FFmpegError(code: FFmpegError.posix(EINVAL), function: "avio_write") }
        guard !bytes.isEmpty else { return }
        avio_write(pb, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(bytes.count))
        avio_flush(pb)
        // avio reports a failed protocol write through `error`, not a return value.
        try check(pb.pointee.error, "avio_write")
    }

    /// Flushes and closes the connection.
    public func close() throws {
        guard context != nil else { return }
        avio_flush(context)
        let error = context!.pointee.error
        try check(avio_closep(&context), "avio_close")
        try check(error, "avio_flush")
    }

    /// Whether libavformat has a protocol that can write this URL's scheme.
    public static func canWrite(url: String) -> Bool {
        guard let name = avio_find_protocol_name(url) else { return false }
        var opaque: UnsafeMutableRawPointer? = nil
        while let p = avio_enum_protocols(&opaque, 1) {
            if strcmp(p, name) == 0 { return true }
        }
        return false
    }
}
