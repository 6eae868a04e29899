import Glibc

/// Thin wrappers around socket system calls that return typed errors.
enum Socket {
    /// Creates a TCP socket that is non-blocking and close-on-exec.
    static func makeTCP(family: Int32) throws(SocketError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(family, type, 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", errno: errno) }
        return fd
    }

    static func setNonBlockingAndCloseOnExec(_ fd: Int32) throws(SocketError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0,
              fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
            throw SocketError(operation: "fcntl", errno: errno)
        }
    }

    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(SocketError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError(operation: "setsockopt", errno: errno)
        }
    }

    static func setNoDelay(_ fd: Int32) throws(SocketError) {
        try self.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
    }

    #if os(Linux)
    /// Binds `fd` to the interface named `interface` (`SO_BINDTODEVICE`, resolved in the socket's own network
    /// namespace): its packets leave by that interface whatever the default route says. Unprivileged since Linux
    /// 5.7; an unknown name fails with `ENODEV`, a name of `IFNAMSIZ` bytes or more with `EINVAL`.
    static func bind(_ fd: Int32, toInterface interface: String) throws(SocketError) {
        var name = Array(interface.utf8)
        guard !name.isEmpty, name.count < Int(IFNAMSIZ), !name.contains(0) else {
            throw SocketError(operation: "setsockopt(SO_BINDTODEVICE)", errno: EINVAL)
        }
        name.append(0)
        let result = name.withUnsafeBytes {
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0.baseAddress, socklen_t($0.count))
        }
        guard result == 0 else { throw SocketError(operation: "setsockopt(SO_BINDTODEVICE)", errno: errno) }
    }
    #endif

    /// Makes the next `close` send RST instead of FIN (SO_LINGER with a zero timeout).
    static func setLingerZero(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// The pending error of a socket (`SO_ERROR`), which also clears it.
    static func pendingError(_ fd: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }

    /// Closes `fd`. On Linux the descriptor is released even when `close` reports `EINTR`,
    /// so it is never retried (a retry could close a descriptor another thread just opened).
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// The local or remote address of a socket.
    static func address(of fd: Int32, peer: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                peer ? getpeername(fd, address, &length) : getsockname(fd, address, &length)
            }
        }
        guard result == 0 else { return nil }
        return SocketAddress(storage: storage)
    }
}
