import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where `livemux serve` listens: `HOST:PORT`, loopback unless told otherwise. The host is an
/// IPv4 address, an IPv6 address in brackets (`[::1]:8080`), or `localhost` (127.0.0.1); a bare
/// port (`8080`, `:8080`) is 127.0.0.1. Port 0 lets the kernel choose a free port.
public struct ListenAddress: Sendable, Equatable {
    /// An IPv4 or IPv6 address (IPv6 without brackets).
    public var host: String
    public var port: UInt16

    public init(host: String = "127.0.0.1", port: UInt16) {
        self.host = host
        self.port = port
    }

    public static func parse(_ text: String) -> ListenAddress? {
        var host = "127.0.0.1", portText = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(close, offsetBy: 2)...]
            guard host.contains(":") else { return nil }
        } else if let colon = text.lastIndex(of: ":") {
            let h = text[..<colon]
            guard !h.contains(":") else { return nil }  // IPv6 needs its brackets
            if !h.isEmpty { host = h.lowercased() == "localhost" ? "127.0.0.1" : String(h) }
            portText = text[text.index(after: colon)...]
        }
        guard !portText.isEmpty, portText.allSatisfy({ ("0"..."9").contains($0) }), let port = UInt16(portText) else { return nil }
        let address = ListenAddress(host: host, port: port)
        return address.socketAddress() == nil ? nil : address
    }

    var isIPv6: Bool { host.contains(":") }

    /// 127.0.0.0/8 or ::1: only this machine can connect.
    public var isLoopback: Bool {
        guard let bytes = socketAddress()?.address else { return false }
        return isIPv6 ? bytes == [UInt8](repeating: 0, count: 15) + [1] : bytes.first == 127
    }

    /// `127.0.0.1:8080`, `[::1]:8080`: as it goes into a URL.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// A `sockaddr_in` or `sockaddr_in6` for `bind`, with `socketAddress()`'s bytes: both start
    /// with the family and the port, and the address follows at its own offset.
    func socketStorage(_ bytes: [UInt8]) -> sockaddr_storage {
        var storage = sockaddr_storage()
        let addressOffset = isIPv6 ? MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)! : MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.storeBytes(of: sa_family_t(isIPv6 ? AF_INET6 : AF_INET), as: sa_family_t.self)
            raw.storeBytes(of: port.bigEndian, toByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self)
            UnsafeMutableRawBufferPointer(rebasing: raw[addressOffset..<addressOffset + bytes.count]).copyBytes(from: bytes)
        }
        return storage
    }

    var socketLength: socklen_t { socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size) }

    /// The address family and the address's bytes (network order); nil when the host is not a
    /// literal address of its family.
    func socketAddress() -> (family: Int32, address: [UInt8])? {
        let family = isIPv6 ? AF_INET6 : AF_INET
        var bytes = [UInt8](repeating: 0, count: isIPv6 ? 16 : 4)
        guard inet_pton(family, host, &bytes) == 1 else { return nil }
        return (family, bytes)
    }
}
