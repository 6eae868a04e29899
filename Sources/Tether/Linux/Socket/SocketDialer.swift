#if os(Linux)
import TetherPOSIX

/// How a `SocketTransport` reaches an address: the network namespace its sockets live in, the hosts file of that
/// namespace, and the Happy Eyeballs delay between connection attempts. Shared by all its connections.
struct SocketDialer: Sendable {
    /// The network namespace the sockets are created in; nil for the process's own.
    var namespace: NetworkNamespace?
    /// The hosts file consulted before `getaddrinfo` (the namespace's, as `ip netns exec` shows it); nil for none.
    var hostsFile: String?
    /// RFC 8305's Connection Attempt Delay.
    var attemptDelay: Duration

    init(namespace: String?, attemptDelay: Duration) {
        self.namespace = namespace.map(NetworkNamespace.init(path:))
        self.hostsFile = namespace.flatMap(HostsFile.path(forNamespace:))
        self.attemptDelay = attemptDelay
    }

    /// The process's own namespace, the default delay.
    static let direct = SocketDialer(namespace: nil, attemptDelay: .milliseconds(HappyEyeballs.defaultAttemptDelay))
}
#endif
