import Foundation
import TetherWire

/// What a transport needs to open one connection.
public struct TransportRequest: Sendable {
    /// `ws://` or `wss://` URL, including path and query.
    public var url: URL
    /// Extra HTTP headers for the opening handshake (for example `Authorization`).
    public var headers: [(name: String, value: String)]
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference.
    public var subprotocols: [String]
    /// Largest message accepted from the peer, in bytes.
    public var maximumMessageSize: Int
    /// The transport's own bound on TCP connect plus the opening handshake, for a transport used on its own (whole
    /// milliseconds, rounded down). Under a `WebSocketClient` the session machine owns the connect deadline
    /// (`WebSocketConfiguration.connectTimeout`) and closes the attempt itself; the client sets this to twice that
    /// deadline plus one second, a backstop that only a stalled process could reach. Should it fire anyway, its
    /// `.connectFailed(.timedOut)` is recorded with the machine's reason, `connect_timeout`.
    public var connectTimeout: Duration
    /// How long to wait for the peer's close frame after sending ours before dropping TCP (whole milliseconds,
    /// rounded down).
    public var closeTimeout: Duration
    /// The levels of the bytes waiting to be written: `send` suspends above `high` until the queue is down to
    /// `low`, and the connection stops reading while what it owes the peer (pongs) cannot go out.
    public var outboundWatermarks: Watermarks
    /// How a `wss://` connection verifies its server (see `TLSOptions`). Default: verify against the system trust
    /// store.
    public var tls: TLSOptions
    /// Whether the connection tunnels through an HTTP proxy (see `ProxyConfiguration`). Default `.none`.
    public var proxy: ProxyConfiguration
    /// permessage-deflate to offer (see `CompressionOptions`); nil (the default): none.
    public var compression: CompressionOptions?
    /// The response headers of the opening handshake to keep, by name (case-insensitive): the transport reports
    /// them in `HandshakeResult.headers` and keeps no other. Default none.
    public var responseHeaderNames: [String]
    /// How many redirects of the opening handshake (301, 302, 303, 307, 308) the connection follows before it
    /// ends with `.redirectFailed(.tooMany)`; 0 follows none (a redirect then ends it as `.handshakeRejected` with
    /// its status). Default 5. Each hop is checked as the first URL is (scheme, host, port), goes through the proxy
    /// the configuration names for its host (the `no_proxy` rule applied again), and is reported
    /// (`TransportEvent.redirected`); `wss` to `ws` is refused (`.downgrade`), a URL seen twice is a loop. On a hop
    /// to another origin (scheme, host or port) `Authorization` and `Cookie` are not sent.
    public var maximumRedirects: Int
    /// The interface the connection must leave by (`eth1`, `wlan0`), as a path monitor named it; nil (the default)
    /// for the route the system prefers when the connection starts. `SocketTransport` binds its sockets to it
    /// (`SO_BINDTODEVICE`); a name the system does not know ends the attempt with `.connectFailed`.
    package var interface: String?

    public init(
        url: URL,
        headers: [(name: String, value: String)] = [],
        subprotocols: [String] = [],
        maximumMessageSize: Int = 16 << 20,
        connectTimeout: Duration = .seconds(10),
        closeTimeout: Duration = .seconds(2),
        outboundWatermarks: Watermarks = .standard,
        tls: TLSOptions = TLSOptions(),
        proxy: ProxyConfiguration = .none,
        compression: CompressionOptions? = nil,
        responseHeaderNames: [String] = [],
        maximumRedirects: Int = 5
    ) {
        self.url = url
        self.headers = headers
        self.subprotocols = subprotocols
        self.maximumMessageSize = maximumMessageSize
        self.connectTimeout = connectTimeout
        self.closeTimeout = closeTimeout
        self.outboundWatermarks = outboundWatermarks
        self.tls = tls
        self.proxy = proxy
        self.compression = compression
        self.responseHeaderNames = responseHeaderNames
        self.maximumRedirects = maximumRedirects
    }
}

extension TransportRequest {
    /// `connectTimeout` and `closeTimeout` in milliseconds, as they were before they became `Duration`s.
    @available(*, deprecated, message: "connectTimeout and closeTimeout are Durations: connectTimeout: .seconds(10)")
    public init(
        url: URL,
        headers: [(name: String, value: String)] = [],
        subprotocols: [String] = [],
        maximumMessageSize: Int = 16 << 20,
        connectTimeout: Int,
        closeTimeout: Int = 2_000,
        outboundWatermarks: Watermarks = .standard,
        tls: TLSOptions = TLSOptions(),
        proxy: ProxyConfiguration = .none,
        compression: CompressionOptions? = nil
    ) {
        self.init(
            url: url, headers: headers, subprotocols: subprotocols, maximumMessageSize: maximumMessageSize,
            connectTimeout: .milliseconds(connectTimeout), closeTimeout: .milliseconds(closeTimeout),
            outboundWatermarks: outboundWatermarks, tls: tls, proxy: proxy, compression: compression)
    }
}
