#if os(Linux)
import Glibc

/// A blocking TCP listener on 127.0.0.1 with a port the kernel picks, for peers that drive a socket by hand, byte
/// by byte (a ping flood, a server that never reads, a benchmark's bound-testing peer), outside any event loop.
package enum BlockingLoopbackListener {
    /// Listens (backlog 1, close-on-exec) and returns the descriptor, which the caller closes, and the port.
    /// - Parameter configure: called on the socket before it binds, for options an accepted socket inherits
    ///   (`SO_RCVBUF`, `SO_REUSEADDR`).
    package static func open(
        configure: (Int32) -> Void = { _ in }
    ) throws(SocketError) -> (descriptor: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw SocketError(operation: "socket", errno: errno) }
        configure(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        var failed: String?
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                if bind(listener, address, length) != 0 {
                    failed = "bind"
                } else if listen(listener, 1) != 0 {
                    failed = "listen"
                } else if getsockname(listener, address, &length) != 0 {
                    failed = "getsockname"
                }
            }
        }
        if let failed {
            let code = errno
            close(listener)
            throw SocketError(operation: failed, errno: code)
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }
}
#endif
