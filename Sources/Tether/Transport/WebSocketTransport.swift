/// Makes connections. One transport may serve many connections and many clients.
public protocol WebSocketTransport: Sendable {
    /// Starts connecting at once and returns the connection whose `events` report the outcome.
    /// Failures (bad URL scheme, refused, rejected handshake) arrive as `.ended(...)`, never as a throw.
    func connect(_ request: TransportRequest) -> any TransportConnection

    /// Whether this transport honours every setting of `request` (its TLS options and proxy, say): called when a
    /// client is created, with the request its configuration makes, so that a setting the transport cannot honour
    /// fails there, with the property named, instead of being ignored. A setting that can only be judged when
    /// connecting (a proxy from the environment) ends that connection instead. The default accepts everything: a
    /// transport of your own that ignores a setting should refuse it here.
    /// - Throws: `WebSocketConfigurationError` naming the first setting it cannot honour.
    func checkSupport(of request: TransportRequest) throws(WebSocketConfigurationError)

    /// Connects like `connect(_:)`, but hands every event of the connection to `handler` by a direct call on
    /// `executor`'s thread (isolated to it), in order, instead of the `events` stream (which then only finishes):
    /// no stream and no task between the transport and a consumer that runs on that executor. Returns nil, without
    /// connecting, when this transport cannot deliver on `executor`; the consumer then calls `connect(_:)` and
    /// reads `events`. The default returns nil.
    ///
    /// A transport that delivers must call `handler` only from work of its own on `executor` (a read, a timer, a
    /// later turn), never from inside a call the consumer makes into the connection, so that the consumer may call
    /// the connection from the handler. `.ended` is the last call. `WebSocketClient` passes its own executor (on
    /// Linux, its configuration's event loop), and `SocketTransport` delivers when that is the loop of its sockets.
    func connect(
        _ request: TransportRequest, deliveringOn executor: any SerialExecutor,
        _ handler: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportConnection)?
}

extension WebSocketTransport {
    public func checkSupport(of request: TransportRequest) throws(WebSocketConfigurationError) {}

    public func connect(
        _ request: TransportRequest, deliveringOn executor: any SerialExecutor,
        _ handler: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportConnection)? {
        nil
    }
}
