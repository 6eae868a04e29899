#if os(Linux)
import Foundation
import Glibc

/// What the kernel counts for one TCP socket of this process: every byte the application wrote to it and read from
/// it, and what waits in each direction. From `TCP_INFO` (`tcpi_bytes_acked` and `tcpi_bytes_received`, Linux 4.1
/// and later) and the `SIOCOUTQ` and `SIOCINQ` ioctls, so exact, whatever is in flight or not yet acknowledged.
struct TCPCounters: Equatable, Sendable {
    /// Bytes the peer acknowledged.
    var acknowledged: Int
    /// Bytes written by the application and not acknowledged yet, sent or not.
    var unacknowledged: Int
    /// Bytes received in order.
    var received: Int
    /// Bytes received and not read by the application yet.
    var unread: Int

    /// Every byte the application handed to the kernel.
    var written: Int { self.acknowledged + self.unacknowledged }
    /// Every byte the application took from the kernel.
    var read: Int { self.received - self.unread }

    // Not in Glibc's headers: `linux/sockios.h` (SIOCOUTQ is TIOCOUTQ, SIOCINQ is FIONREAD) and `linux/tcp.h`, whose
    // `struct tcp_info` glibc's `netinet/tcp.h` cuts before the byte counters.
    private static let outputQueueRequest: UInt = 0x5411
    private static let inputQueueRequest: UInt = 0x541B
    private static let tcpInfoOption: Int32 = 11
    private static let bytesAckedOffset = 120
    private static let bytesReceivedOffset = 128

    /// The counters of `descriptor`, or nil when it is not a TCP socket or the kernel is older than 4.1.
    static func of(_ descriptor: Int32) -> TCPCounters? {
        var info = [UInt8](repeating: 0, count: 256)
        var length = socklen_t(info.count)
        let got = info.withUnsafeMutableBytes { info in
            getsockopt(descriptor, Int32(IPPROTO_TCP), Self.tcpInfoOption, info.baseAddress, &length)
        }
        guard got == 0, Int(length) >= Self.bytesReceivedOffset + 8 else { return nil }
        var unacknowledged: Int32 = 0
        var unread: Int32 = 0
        guard ioctl(descriptor, Self.outputQueueRequest, &unacknowledged) == 0,
              ioctl(descriptor, Self.inputQueueRequest, &unread) == 0
        else { return nil }
        return info.withUnsafeBytes { bytes in
            TCPCounters(
                acknowledged: Int(bytes.loadUnaligned(fromByteOffset: Self.bytesAckedOffset, as: UInt64.self)),
                unacknowledged: Int(unacknowledged),
                received: Int(bytes.loadUnaligned(fromByteOffset: Self.bytesReceivedOffset, as: UInt64.self)),
                unread: Int(unread))
        }
    }

    /// This process's descriptor for the IPv4 TCP socket from local port `local` to remote port `remote`: how the
    /// check finds a client's socket, which the client does not expose. Only looks (`getsockname`, `getpeername`).
    static func descriptor(localPort local: Int, remotePort remote: Int) -> Int32? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        for entry in entries {
            guard let descriptor = Int32(entry),
                  self.port(of: descriptor, peer: false) == local,
                  self.port(of: descriptor, peer: true) == remote
            else { continue }
            return descriptor
        }
        return nil
    }

    /// This process's descriptor for the one IPv4 TCP socket connected to remote port `remote` (a client's socket to
    /// an embedded server, whose own sockets have that port as their local one), or nil if none or several.
    static func descriptor(remotePort remote: Int) -> Int32? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        let matches = entries.compactMap(Int32.init).filter { self.port(of: $0, peer: true) == remote }
        return matches.count == 1 ? matches.first : nil
    }

    private static func port(of descriptor: Int32, peer: Bool) -> Int? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                peer ? getpeername(descriptor, address, &length) == 0 : getsockname(descriptor, address, &length) == 0
            }
        }
        guard found, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
#endif
