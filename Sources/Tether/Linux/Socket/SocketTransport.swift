#if os(Linux)
import Foundation
import TetherPOSIX
import TetherWire

/// Tether's own RFC 6455 client over POSIX sockets: the default transport on Linux.
///
/// - `ws://` over TCP and `wss://` over TLS (the system OpenSSL, driven by the same event loop), IPv4 and IPv6
///   (`ws://[::1]:8080/`). Names are resolved with `getaddrinfo` on the
///   resolver's own threads, never on the caller's executor or the cooperative pool.
/// - Sockets are non-blocking with `TCP_NODELAY` and driven by one shared epoll event loop: no thread per
///   connection, no polling. Framing, masking, UTF-8 validation and the handshake come from TetherWire.
/// - One deadline (`TransportRequest.connectTimeout`) covers resolution, TCP connect and the opening handshake; under
///   a `WebSocketClient` it is only a backstop behind the session's own deadline.
/// - TLS: 1.2 or later, verified against the system trust store and the URL's host (`TransportRequest.tls` adds
///   roots and pins, or turns verification off for local tests); SNI for host names. A TLS failure before the
///   open ends with `.tlsFailed` (`permanent` for a certificate that does not verify); after the open, like any
///   broken connection, with `.receiveFailed`. A clean close sends `close_notify`; the server's end of stream
///   without one is a truncated connection (`.receiveFailed` while open). TLS options that cannot be used (an
///   unreadable CA file) end the connection at once with a permanent `.tlsFailed`. Reconnects resume the server's
///   latest TLS session for the same host, port and TLS options (`TLSOptions.sessionResumption`).
/// - HTTP proxies (`TransportRequest.proxy`): the TCP connection goes to the proxy, a `CONNECT` opens a tunnel to
///   the origin (with Basic authentication when the proxy has credentials), and TLS (verified against the origin's
///   host name, SNI included) and the upgrade run inside it. A refusal ends with `.proxyRejected` and its status; a
///   proxy that cannot be reached with `.proxyUnreachable`; one that hangs up without answering with
///   `.receiveFailed`. Credentials are never shown. SOCKS5 proxies (`socks5h://`, `socks5://`) the same way, their
///   refusals as `.socksRejected` naming the refusal (see `SOCKSRefusal`).
/// - A name's addresses are raced (Happy Eyeballs, `connectionAttemptDelay`); a connect that fails ends with
///   `.connectFailed` (or `.proxyUnreachable`) listing every address tried and how each try ended.
/// - A scheme other than `ws` or `wss` ends at once with `.connectFailed(.unsupported)` (see
///   `unsupportedReason(for:)` for the text to show), as does a request the handshake cannot carry (for example
///   an extra header that the handshake sets itself, such as `Host`).
/// - `send` accepts messages up to `TransportRequest.maximumMessageSize` bytes, the same limit that applies to
///   received messages (default 16 MiB), and throws `.messageTooLarge` beyond it: a message is encoded and
///   queued whole, so the limit also bounds the memory one `send` can hold. Messages are never fragmented.
/// - `close(code:reason:)` sends `code` (one that may not appear on the wire, such as 1005, becomes 1000) and
///   the reason cut to 123 UTF-8 bytes at a character boundary.
/// - A TCP connection that breaks during the opening handshake (the server hangs up or resets) ends with
///   `.receiveFailed`, like one that breaks while open.
public struct SocketTransport: WebSocketTransport {
    let loop: EventLoop
    /// The namespace, hosts file and attempt delay of every connection.
    let dialer: SocketDialer
    /// The TLS contexts this transport's connections used, kept with their sessions: a client's reconnect offers
    /// the session its previous connection was issued (copies of the transport share them).
    let tlsContexts = TLSContextKeeper()

    /// A transport whose connections run on the process-wide shared event loop.
    /// - Parameters:
    ///   - namespace: a network namespace file (for example `/var/run/netns/NAME`) to create every socket in, as
    ///     `NetlinkPathMonitor(namespace:)` watches one; nil (the default) for the process's own namespace. Only a
    ///     short-lived thread enters the namespace to create each socket (which keeps it for life); names are still
    ///     resolved in the process's namespace, except that the namespace's own hosts file (`/etc/netns/NAME/hosts`,
    ///     which `ip netns exec` shows as `/etc/hosts`) is read first when it exists. Entering a namespace needs
    ///     `CAP_SYS_ADMIN`; when it fails, the connection ends with `.connectFailed`.
    ///   - connectionAttemptDelay: Happy Eyeballs (RFC 8305): a name's addresses are tried with the families
    ///     alternating, each next attempt this long after the previous one unless that one has connected (at once
    ///     when one fails), and the first to connect is used. Default 250 ms, the RFC's; kept within 10 ms...2 s.
    public init(namespace: String? = nil, connectionAttemptDelay: Duration = .milliseconds(250)) {
        self.loop = .shared
        self.dialer = SocketDialer(namespace: namespace, attemptDelay: connectionAttemptDelay)
    }

    /// A transport whose connections run on `loop`: a private loop keeps a group of connections (a test, a
    /// benchmark, `tether check`) off the shared loop's thread. The loop must outlive the connections.
    /// - Parameters: `namespace` and `connectionAttemptDelay` as in `init(namespace:connectionAttemptDelay:)`.
    package init(loop: EventLoop, namespace: String? = nil, connectionAttemptDelay: Duration = .milliseconds(250)) {
        self.loop = loop
        self.dialer = SocketDialer(namespace: namespace, attemptDelay: connectionAttemptDelay)
    }

    public func connect(_ request: TransportRequest) -> any TransportConnection {
        SocketConnection(request: request, loop: self.loop, dialer: self.dialer, tlsContexts: self.tlsContexts)
    }

    /// Delivers directly when `executor` is this transport's event loop: each event is handed to `handler` on the
    /// loop's thread, from the loop's own work (a read, a timer, a later turn). Nil for any other executor.
    public func connect(
        _ request: TransportRequest, deliveringOn executor: any SerialExecutor,
        _ handler: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportConnection)? {
        guard executor === self.loop else { return nil }
        return SocketConnection(
            request: request, loop: self.loop, dialer: self.dialer, tlsContexts: self.tlsContexts, handler: handler)
    }

    /// Why this transport cannot serve `request`, as text for a log or a user, or nil when it can.
    /// A request it cannot serve ends with `.connectFailed(.unsupported)` without touching the network.
    package static func unsupportedReason(for request: TransportRequest) -> String? {
        switch SocketEndpoint.make(for: request) {
        case .success: nil
        case .failure(let reason): reason.description
        }
    }
}

/// Why a request cannot be served by `SocketTransport`.
enum SocketUnsupported: Error, Equatable, CustomStringConvertible {
    /// The TLS options cannot be used (an unreadable CA file, a malformed pin); a fixed text.
    case tlsConfiguration(String)
    /// The proxy environment variable that applies names a proxy other than `http://`, `socks5://` or `socks5h://`
    /// (its value is not shown).
    case proxyScheme
    /// A scheme other than `ws` or `wss`.
    case scheme(String)
    /// The URL has no host.
    case missingHost
    /// The opening handshake cannot carry the request as given (bad header, subprotocol, host or port).
    case invalidRequest(String)

    var description: String {
        switch self {
        case .tlsConfiguration(let detail): "unusable TLS options: \(detail)"
        case .proxyScheme:
            "the proxy environment variable names a proxy other than http://, socks5:// or socks5h://, which "
                + "SocketTransport cannot use"
        case .scheme(let scheme):
            "unsupported URL scheme \"\(scheme)\": SocketTransport serves ws:// and wss:// only"
        case .missingHost: "the URL has no host"
        case .invalidRequest(let detail): "the opening handshake cannot carry this request: \(detail)"
        }
    }
}
#endif
