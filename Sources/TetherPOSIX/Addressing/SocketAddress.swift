import Glibc

/// An IPv4 or IPv6 address with a TCP port, as used by `connect` and `bind`.
package struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    package enum Family: Hashable, Sendable {
        case ipv4
        case ipv6
    }

    package let family: Family
    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    package let addressBytes: [UInt8]
    /// The port, 0...65535.
    package let port: Int
    /// The IPv6 zone (interface index) of a link-local address; 0 otherwise.
    package let scopeID: UInt32

    /// Parses a numeric IPv4 or IPv6 address (`"127.0.0.1"`, `"::1"`, `"[::1]"`, `"fe80::1%eth0"`).
    /// Returns `nil` for anything else, including host names (use `Resolver` for those) and ports
    /// outside 0...65535.
    package init?(ip: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var text = Substring(ip)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var zone: Substring?
        if let percent = text.firstIndex(of: "%") {
            zone = text[text.index(after: percent)...]
            text = text[..<percent]
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        if zone == nil, inet_pton(AF_INET, String(text), &v4) == 1 {
            self.init(family: .ipv4, addressBytes: withUnsafeBytes(of: v4) { Array($0) }, port: port, scopeID: 0)
        } else if inet_pton(AF_INET6, String(text), &v6) == 1 {
            var scope: UInt32 = 0
            if let zone {
                if let index = UInt32(zone) {
                    scope = index
                } else {
                    scope = if_nametoindex(String(zone))
                    guard scope != 0 else { return nil }
                }
            }
            self.init(family: .ipv6, addressBytes: withUnsafeBytes(of: v6) { Array($0) }, port: port, scopeID: scope)
        } else {
            return nil
        }
    }

    private init(family: Family, addressBytes: [UInt8], port: Int, scopeID: UInt32) {
        self.family = family
        self.addressBytes = addressBytes
        self.port = port
        self.scopeID = scopeID
    }

    /// Reads an `AF_INET` or `AF_INET6` socket address; `nil` for other families.
    init?(storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            self.init(
                family: .ipv4,
                addressBytes: withUnsafeBytes(of: address.sin_addr) { Array($0) },
                port: Int(UInt16(bigEndian: address.sin_port)),
                scopeID: 0
            )
        case AF_INET6:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            self.init(
                family: .ipv6,
                addressBytes: withUnsafeBytes(of: address.sin6_addr) { Array($0) },
                port: Int(UInt16(bigEndian: address.sin6_port)),
                scopeID: address.sin6_scope_id
            )
        default:
            return nil
        }
    }

    /// The same address with another port.
    package func withPort(_ port: Int) -> SocketAddress {
        SocketAddress(family: self.family, addressBytes: self.addressBytes, port: port, scopeID: self.scopeID)
    }

    /// The numeric host, without brackets (`"127.0.0.1"`, `"::1"`, `"fe80::1%2"`).
    package var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = self.family == .ipv4 ? AF_INET : AF_INET6
        let converted = self.addressBytes.withUnsafeBytes { bytes in
            inet_ntop(family, bytes.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard converted != nil else { return "?" }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return self.scopeID == 0 ? text : "\(text)%\(self.scopeID)"
    }

    /// `"127.0.0.1:8080"` or `"[::1]:8080"`.
    package var description: String {
        self.family == .ipv4 ? "\(self.host):\(self.port)" : "[\(self.host)]:\(self.port)"
    }

    var protocolFamily: Int32 { self.family == .ipv4 ? AF_INET : AF_INET6 }

    /// Calls `body` with a `sockaddr` for this address.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch self.family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(self.port).bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: self.addressBytes) }
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(self.port).bigEndian
            address.sin6_scope_id = self.scopeID
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: self.addressBytes) }
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
