#if os(Linux)
import Glibc

/// A loopback port that is bound but never listens, held for the owner's lifetime: connecting to it is
/// refused by the kernel, and no parallel test can be handed the same port meanwhile (which a closed
/// listener's port can be, within milliseconds).
final class ReservedPort {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ReservedPortError(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
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

struct ReservedPortError: Error {
    var errno: Int32
}
#endif
