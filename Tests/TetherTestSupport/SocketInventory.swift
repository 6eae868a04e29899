#if os(Linux)
import Glibc

/// Which sockets this process holds, read from `/proc`, to prove that connections leave none behind.
///
/// Counting all of `/proc/self/fd` would race with other suites running in parallel in the same process, so the
/// checks are by identity: the inodes of this process's open sockets (`/proc/self/fd/N -> socket:[inode]`) that
/// are TCP sockets of one test port (`/proc/net/tcp`, `/proc/net/tcp6`), or that a test noted itself.
package enum SocketInventory {
    /// This process's open descriptors that are connected TCP sockets with `port` at either end
    /// (listening sockets excluded).
    package static func openConnections(port: Int) -> Set<UInt64> {
        self.openSocketInodes().intersection(self.tcpInodes(port: port, ends: .either))
    }

    /// This process's open descriptors that are TCP sockets connecting or connected to remote `port`: the
    /// client side only.
    package static func openClientConnections(port: Int) -> Set<UInt64> {
        self.openSocketInodes().intersection(self.tcpInodes(port: port, ends: .remote))
    }

    /// Inodes of every socket in `/proc/self/fd`.
    package static func openSocketInodes() -> Set<UInt64> {
        var inodes = Set<UInt64>()
        guard let directory = opendir("/proc/self/fd") else { return inodes }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != ".", name != ".." else { continue }
            var buffer = [CChar](repeating: 0, count: 256)
            let count = readlink("/proc/self/fd/\(name)", &buffer, buffer.count - 1)
            guard count > 0 else { continue }
            let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if target.hasPrefix("socket:["), target.hasSuffix("]"),
               let inode = UInt64(target.dropFirst("socket:[".count).dropLast()) {
                inodes.insert(inode)
            }
        }
        return inodes
    }

    /// The inode of an open socket descriptor.
    package static func socketInode(of descriptor: Int32) -> UInt64? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return UInt64(status.st_ino)
    }

    /// Which end of a TCP socket `tcpInodes(port:ends:)` matches the port against.
    package enum Ends {
        /// The local port, listening sockets included.
        case local
        /// The remote port (the client side of a connection to `port`), not listening.
        case remote
        /// Either port, not listening.
        case either
    }

    /// Inodes of the TCP sockets whose port at `ends` is `port`.
    package static func tcpInodes(port: Int, ends: Ends) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for line in self.read(table).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9 else { continue }
                let listening = fields[3] == "0A"  // 0A: LISTEN
                let addresses = switch ends {
                case .local: [fields[1]]
                case .remote: listening ? [] : [fields[2]]
                case .either: listening ? [] : [fields[1], fields[2]]
                }
                let ports = addresses.compactMap { address in
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
