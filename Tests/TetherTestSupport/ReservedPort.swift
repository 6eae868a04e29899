#if os(Linux)
import Glibc

/// A port on 127.0.0.1 that nobody listens on while this value lives: a socket is bound to it but never listens,
/// so connects are refused by the kernel, and no other socket (another test's listener running in parallel) can
/// take the port meanwhile. A closed listener's port could be handed to a parallel test within milliseconds.
package final class ReservedPort: Sendable {
    package let port: Int
    private let descriptor: Int32

    package init() throws(ReservedPortError) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ReservedPortError(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw ReservedPortError(errno: code)
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(self.descriptor) }
}

/// The system's reason a port could not be reserved.
package struct ReservedPortError: Error {
    package var errno: Int32
}
#endif
