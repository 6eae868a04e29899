#if os(Linux)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Plain IPv4 sockets on loopback for tests that play a peer or look at the kernel's counters.
enum LoopbackSockets {
    /// A connected loopback pair (writer, reader) with their ports.
    static func pair() throws -> (Int32, Int32, Int, Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try Self.withAddress(&address) { pointer in
            guard bind(listener, pointer, length) == 0, listen(listener, 1) == 0,
                  getsockname(listener, pointer, &length) == 0
            else { throw POSIXError(.EADDRNOTAVAIL) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let writer = try Self.connect(to: port)
        let reader = accept(listener, nil, nil)
        guard reader >= 0 else { throw POSIXError(.EIO) }
        var local = Self.loopback(port: 0)
        length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try Self.withAddress(&local) { pointer in
            guard getsockname(writer, pointer, &length) == 0 else { throw POSIXError(.EIO) }
        }
        return (writer, reader, Int(UInt16(bigEndian: local.sin_port)), port)
    }

    static func connect(to port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: port)
        try Self.withAddress(&address) { pointer in
            guard Glibc.connect(descriptor, pointer, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 else {
                close(descriptor)
                throw POSIXError(.ECONNREFUSED)
            }
        }
        return descriptor
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private static func withAddress(
        _ address: inout sockaddr_in, _ body: (UnsafeMutablePointer<sockaddr>) throws -> Void
    ) throws {
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
        }
    }
}
#endif
