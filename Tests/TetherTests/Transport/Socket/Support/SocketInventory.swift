#if os(Linux)
import Foundation
import Glibc

/// Which sockets this process holds, read from `/proc`, to prove that connections leave none behind.
///
/// Counting all of `/proc/self/fd` would race with other suites running in parallel in the same process, so the
/// check is by identity: the inodes of this process's open sockets (`/proc/self/fd/N -> socket:[inode]`) that are
/// TCP connections to or from one test port (`/proc/net/tcp`, `/proc/net/tcp6`).
enum SocketInventory {
    /// This process's open descriptors that are connected TCP sockets with `port` at either end
    /// (listening sockets excluded).
    static func openConnections(port: Int) -> Set<UInt64> {
        self.openSocketInodes().intersection(self.tcpConnectionInodes(port: port))
    }

    /// This process's open descriptors that are TCP sockets connecting or connected to remote `port`: the
    /// client side only.
    static func openClientConnections(port: Int) -> Set<UInt64> {
        self.openSocketInodes().intersection(self.tcpConnectionInodes(port: port, remoteOnly: true))
    }

    /// Inodes of every socket in `/proc/self/fd`.
    static func openSocketInodes() -> Set<UInt64> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var inodes = Set<UInt64>()
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix("socket:["), target.hasSuffix("]"),
                  let inode = UInt64(target.dropFirst("socket:[".count).dropLast())
            else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    /// Inodes of TCP sockets, not listening, whose local or remote port is `port` (only remote if `remoteOnly`).
    static func tcpConnectionInodes(port: Int, remoteOnly: Bool = false) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for line in self.read(table).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[3] != "0A" else { continue }  // 0A: LISTEN
                let ports = (remoteOnly ? [fields[2]] : [fields[1], fields[2]]).compactMap { address in
                    address.split(separator: ":").last.flatMap { Int($0, radix: 16) }
                }
                guard ports.contains(port), let inode = UInt64(fields[9]), inode != 0 else { continue }
                inodes.insert(inode)
            }
        }
        return inodes
    }

    /// The whole file. `/proc` tables are produced a page per `read`, and report size 0, so read until EOF
    /// (Foundation's `String(contentsOfFile:)` stops after the first page).
    private static func read(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
#endif
