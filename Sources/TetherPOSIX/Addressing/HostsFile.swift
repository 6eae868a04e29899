/// A hosts file (`/etc/hosts` format) read for one name: what `ip netns exec NAME` shows a program as
/// `/etc/hosts` (it bind-mounts `/etc/netns/NAME/hosts`), which a process that only enters the namespace with
/// `setns` does not see. `Resolver.resolve(host:port:hostsFile:)` consults it before `getaddrinfo`.
package enum HostsFile {
    /// The IP addresses `text` gives `host` (compared without case), in the order of its lines, each once.
    /// A line is an address, then names; `#` starts a comment; lines that do not parse are skipped, as the
    /// C library skips them.
    package static func addresses(for host: String, port: Int, in text: String) -> [SocketAddress] {
        let wanted = host.lowercased()
        var found: [SocketAddress] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.prefix { $0 != "#" }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields.dropFirst().contains(where: { $0.lowercased() == wanted }),
                let address = SocketAddress(ip: String(fields[0]), port: port), !found.contains(address)
            else { continue }
            found.append(address)
        }
        return found
    }

    /// The file `ip netns exec` would show as `/etc/hosts` inside the namespace whose file is `namespacePath`
    /// (`/var/run/netns/NAME` or `/run/netns/NAME`): `/etc/netns/NAME/hosts`. Nil for any other path.
    package static func path(forNamespace namespacePath: String) -> String? {
        for directory in ["/var/run/netns/", "/run/netns/"] where namespacePath.hasPrefix(directory) {
            let name = namespacePath.dropFirst(directory.count)
            guard !name.isEmpty, !name.contains("/") else { return nil }
            return "/etc/netns/\(name)/hosts"
        }
        return nil
    }
}

import Glibc

extension HostsFile {
    /// The largest hosts file read; a longer one is read up to here.
    static let maximumSize = 1 << 20

    /// The file's text, or nil when it cannot be read (it does not exist: the namespace has no hosts file).
    /// Blocking: called on the resolver's threads.
    static func read(path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while bytes.count < Self.maximumSize {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes.prefix(Self.maximumSize), as: UTF8.self)
    }
}
