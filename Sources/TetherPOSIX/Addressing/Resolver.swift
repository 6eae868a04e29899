import Dispatch
import Glibc

/// Host name resolution with `getaddrinfo`.
package enum Resolver {
    /// `getaddrinfo` blocks for as long as DNS takes, so it runs on this queue's threads and never
    /// on Swift's cooperative pool or an event loop.
    private static let queue = DispatchQueue(label: "tether.resolver", attributes: .concurrent)

    /// Resolves `host` to TCP addresses for `port`, in the order `getaddrinfo` prefers (RFC 6724).
    ///
    /// Numeric IPv4/IPv6 literals (with or without brackets) are returned at once without a lookup.
    /// Names are looked up with `AI_ADDRCONFIG` so a host without IPv6 does not get IPv6 addresses;
    /// when that yields nothing (a host or network namespace with only loopback configured, where
    /// glibc ignores loopback for `AI_ADDRCONFIG`) the lookup is repeated without it, so
    /// `localhost` always resolves.
    /// - Parameter hostsFile: a hosts file to consult first (see `HostsFile`); when it names `host`, its addresses
    ///   are the answer, in its order, and `getaddrinfo` is not asked. Nil (the default): only `getaddrinfo`.
    /// - Throws: `SocketError.nameResolution(code:)` with the `EAI_*` code.
    package static func resolve(
        host: String, port: Int, hostsFile: String? = nil
    ) async throws(SocketError) -> [SocketAddress] {
        guard (0...65535).contains(port) else { throw .nameResolution(code: EAI_SERVICE) }
        if let literal = SocketAddress(ip: host, port: port) { return [literal] }
        guard !host.isEmpty else { throw .nameResolution(code: EAI_NONAME) }
        let result: Result<[SocketAddress], SocketError> = await withCheckedContinuation { continuation in
            self.queue.async {
                if let hostsFile, let text = HostsFile.read(path: hostsFile) {
                    let listed = HostsFile.addresses(for: host, port: port, in: text)
                    if !listed.isEmpty { return continuation.resume(returning: .success(listed)) }
                }
                continuation.resume(returning: self.lookUp(host: host, port: port))
            }
        }
        return try result.get()
    }

    /// The blocking lookup, with the `AI_ADDRCONFIG` fallback described above.
    static func lookUp(host: String, port: Int) -> Result<[SocketAddress], SocketError> {
        let first = self.getAddresses(host: host, port: port, flags: AI_ADDRCONFIG)
        switch first {
        case .success(let addresses) where !addresses.isEmpty:
            return first
        case .success, .failure(.nameResolution(code: EAI_NONAME)), .failure(.nameResolution(code: EAI_FAMILY)):
            return self.getAddresses(host: host, port: port, flags: 0)
        #if os(Linux)
        case .failure(.nameResolution(code: GNUExtensions.eaiAddressFamily)):
            return self.getAddresses(host: host, port: port, flags: 0)
        #endif
        case .failure:
            return first
        }
    }

    private static func getAddresses(host: String, port: Int, flags: Int32) -> Result<[SocketAddress], SocketError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = flags | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0 else {
            #if os(Linux)
            if code == EAI_SYSTEM { return .failure(SocketError(operation: "getaddrinfo", errno: errno)) }
            #endif
            return .failure(.nameResolution(code: code))
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry = list
        while let info = entry {
            if let raw = info.pointee.ai_addr {
                var storage = sockaddr_storage()
                let length = min(Int(info.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
                withUnsafeMutableBytes(of: &storage) { destination in
                    destination.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: length))
                }
                if let address = SocketAddress(storage: storage), !addresses.contains(address) {
                    addresses.append(address)
                }
            }
            entry = info.pointee.ai_next
        }
        return .success(addresses)
    }
}
